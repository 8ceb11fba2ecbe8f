internal import TokenCacheRecords
internal import TokenCacheStorage

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

/// What ``TokenStore/rotateDataKey(progress:)`` did.
public struct DataKeyRotationReport: Sendable, Equatable {
    /// The id of the data key every record is now sealed under.
    public var activeKeyID: UInt32 = 0
    /// Whether this call continued a rotation an earlier one started and did not finish.
    public var resumed = false
    /// Records re-sealed under the active key.
    public var resealed = 0
    /// Damaged records that could not be opened, so keep the key they name (``TokenStore/repair(backupTo:progress:)``
    /// removes them).
    public var damaged = 0
    /// Data keys removed from the header at the end (the first key stays: it roots the blind index).
    public var retiredKeyIDs: [UInt32] = []
    /// Write transactions committed.
    public var transactions = 0

    public init() {}
}

extension TokenStore {
    /// Seals every record under a new data key and retires the old ones: for a data key that may have leaked, or as
    /// routine hygiene. The root key stays (``changeRootKey(to:passphraseCost:)`` changes that).
    ///
    /// One transaction adds the new key to the header; records are then re-sealed in transactions of about a thousand,
    /// each leaving a store that every key in its header opens, so the store stays readable throughout and a crash
    /// or kill at any point loses nothing: calling this again continues where it stopped. The last transaction
    /// removes the older keys from the header, once no readable record names them. The first data key is kept for the
    /// store's life, because the blind index and the fingerprints derive from it (FORMAT.md §6.4); no record is sealed
    /// under it after the first rotation.
    ///
    /// From the first transaction on, handles opened before it (this one included, in this process or others) keep
    /// reading (they learn the new data key from the header when they first meet a record sealed under it) but refuse
    /// to write (`.conflict`: the header changed) until they are opened again, after the rotation's last
    /// transaction (which changes the header too).
    /// - Parameter progress: Called after each transaction with the report so far.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` when the header already holds 32 data keys, `.readOnly`,
    ///   `.conflict` when another process changed the header meanwhile (what committed stays; call again), the errors
    ///   of deriving the root key and of ``write(_:)``.
    @discardableResult
    public func rotateDataKey(progress: ((DataKeyRotationReport) -> Void)? = nil) throws -> DataKeyRotationReport {
        do {
            try store.checkWritable()
            var report = DataKeyRotationReport()
            let configuration = self.configuration
            // The header as stored now (a rotation another process began may have changed it since this handle opened).
            var working = try RecordStore.open(configuration, create: false, now: Self.currentTime())
            let root = try RootKey.derive(
                from: configuration.keySource, header: working.keyring.header, maximumCost: configuration.maximumPassphraseCost
            )
            report.resumed = try working.backend.read { try working.isRotationPending(in: $0) }
            if !report.resumed {
                _ = try working.beginRotation(root: root, now: Self.currentTime())
                report.transactions += 1
                working = try RecordStore.open(configuration, create: false, now: Self.currentTime())
            }
            report.activeKeyID = working.keyring.activeKeyID
            progress?(report)
            var done = false
            while !done {
                let step = try working.backend.write { txn in
                    try working.checkHeaderUnchanged(in: txn)
                    // Another process may have finished it.
                    guard try working.isRotationPending(in: txn) else { return (resealed: 0, damaged: 0, retired: [UInt32]?.some([])) }
                    let step = try working.rotationStep(in: txn)
                    return (step.resealed, step.damaged, step.finished ? try working.finishRotation(root: root, in: txn) : nil)
                }
                report.resealed += step.resealed
                report.damaged += step.damaged
                report.transactions += 1
                if let retired = step.retired {
                    report.retiredKeyIDs = retired
                    done = true
                }
                progress?(report)
            }
            return report
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }
}
