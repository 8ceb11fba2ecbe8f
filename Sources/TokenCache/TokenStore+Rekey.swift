extension TokenStore {
    /// Protects the store with a new root key: a key file, a raw key or a passphrase, in place of the one it was opened
    /// with. The data keys are sealed again under the new root key in one transaction; no record is rewritten, so it
    /// takes milliseconds whatever the store's size (plus Argon2id once for a passphrase).
    ///
    /// Afterwards only the new key opens the store. Handles already open, in this process (this one included) or
    /// others, keep reading with the data keys they hold, but refuse to write (`.conflict`: the header changed) until
    /// they are opened again with the new key. For a key file, create it first (``KeyFile/create(at:)``): it must
    /// exist when the header is replaced, so that a crash leaves the store opening with either the old key or the
    /// new one.
    /// - Parameters:
    ///   - source: Where the new root key comes from.
    ///   - passphraseCost: Argon2id parameters for a passphrase (default: the configuration's).
    /// - Throws: ``TokenCacheError``: `.keyUnavailable` when the new key cannot be read, `.invalidArgument` for a cost
    ///   above the configured maximum, `.conflict` when another process changed the header since this store was
    ///   opened (nothing written), `.readOnly`, and the errors of a write.
    public func changeRootKey(to source: KeySource, passphraseCost: PassphraseCost? = nil) throws {
        do {
            try store.rekey(
                to: source, cost: passphraseCost ?? configuration.passphraseCost, maximumCost: configuration.maximumPassphraseCost
            )
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }
}
