public import TokenCache
internal import TokenCacheRecords
internal import TokenCacheStorage
internal import TokenCacheSodium

// Rekeying a store: replacing the keys that protect it, whole. Two operations, both here: a new root key
// (``TokenStore/changeRootKey(to:passphraseCost:)``, one header write) and a new data key every record is re-sealed
// under (``TokenStore/rotateDataKey(to:progress:)``, whose steps are the record store's, since an upgrading open runs them too). Both are ordinary write transactions through
// the storage seam (the header and a cursor in `meta`, the records re-sealed in place): they need no capability of a
// backend beyond them. The sealing itself is the record store's (`RecordStore.move`, `Keyring`).

extension TokenStore {
    /// Protects the store with a new root key: a key file, a raw key or a passphrase, in place of the one it was opened
    /// with. The data keys are sealed again under the new root key in one transaction; no record is rewritten, so it
    /// takes milliseconds whatever the store's size (plus Argon2id once for a passphrase).
    ///
    /// Afterwards only the new key opens the store. Handles already open, in this process (this one included) or
    /// others (other hosts of a shared store), go on reading and writing with the data keys they hold, which have not
    /// changed; opened again, they need the new key. For a key file, create it first (``KeyFile/create(at:)``): it must
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
            try store.checkWritable()
            let generated = try RootKey.generate(
                from: source, cost: passphraseCost ?? configuration.passphraseCost, maximumCost: configuration.maximumPassphraseCost
            )
            // Only the header changes (FORMAT.md §6.3): the data keys sealed again under the new root key; the records,
            // sealed under the data keys, stay as they are.
            var target = store.keyring.header
            target.rootKind = RootKey.kind(of: source)
            target.salt = generated.salt
            target.opsLimit = generated.cost?.opsLimit ?? 0
            target.memLimit = generated.cost?.memLimit ?? 0
            let header: [UInt8]
            do {
                header = try store.keyring.rewrapped(as: target, root: generated.root).encoded()
            } catch {
                throw TokenCacheError(.internalError, "the data keys could not be sealed under the new root key: \(error.message)")
            }
            // One value replaced in one commit: the old root key opens the store or the new one, never neither.
            try store.backend.write { txn in
                // The header as this handle opened it, not one it could follow: the data keys sealed here are its own.
                try store.checkHeaderIsTheOpenedOne(in: txn)
                try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            }
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }
}

/// What ``TokenStore/rotateDataKey(to:progress:)`` did.
public struct DataKeyRotationReport: Sendable, Equatable {
    /// The id of the data key every record is now sealed under.
    public var activeKeyID: UInt32 = 0
    /// The cipher every record is now sealed with: the active data key's.
    public var cipher: StoreCipher = .xchacha20Poly1305
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
    /// From the first transaction on, handles opened before it (this one included, in this process or others, other
    /// hosts of a shared store too) keep reading (they learn the new data key from the header when they first meet a
    /// record sealed under it) and writing: their next write finds the changed header, opens it with their root key
    /// and seals under the new key from then on. A handle that cannot open the new header (it was also given a new
    /// root key meanwhile) refuses to write (`.conflict`: the header changed) until opened again.
    /// - Parameters:
    ///   - cipher: The cipher the new data key seals with (nil: the active key's): a rotation is how a store moves
    ///     between AES-256-GCM and XChaCha20-Poly1305, for example before hosts without AES-NI join it. A rotation
    ///     already under way to the other cipher is finished first, and then one to `cipher` is made.
    ///   - progress: Called after each transaction with the report so far.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` when the header already holds 32 data keys,
    ///   `.unsupportedEnvironment` for a cipher this machine cannot run, `.readOnly`,
    ///   `.conflict` when another process changed the header meanwhile (what committed stays; call again), the errors
    ///   of deriving the root key and of ``write(_:)``. A `.conflict` leaves what committed: the next call (or any
    ///   writable open) continues the rotation.
    @discardableResult
    public func rotateDataKey(to cipher: StoreCipher? = nil, progress: ((DataKeyRotationReport) -> Void)? = nil) throws -> DataKeyRotationReport {
        do {
            try store.checkWritable()
            var report = DataKeyRotationReport()
            // The header as stored now (a rotation another process began may have changed it since this handle opened);
            // this open leaves a rotation under way to the loop below, which reports it.
            var options = configuration.storeOptions
            options.finishesRotation = false
            var working = try RecordStore.open(options, create: false, now: Self.currentTime())
            let root = try RootKey.derive(
                from: configuration.keySource, header: working.keyring.header, maximumCost: configuration.maximumPassphraseCost
            )
            report.resumed = try working.backend.read { try working.isRotationPending(in: $0) }
            var pending = report.resumed
            if pending, let cipher, cipher.recordCipher != working.keyring.activeCipher {
                // The rotation under way goes to the other cipher: it is finished first, then one to `cipher` begins.
                let finished = try working.continueRotation(root: root)
                report.resealed += finished.resealed
                report.damaged += finished.damaged
                report.transactions += finished.transactions
                working = try RecordStore.open(options, create: false, now: Self.currentTime())
                pending = false
            }
            if !pending {
                _ = try working.beginRotation(to: cipher?.recordCipher ?? working.keyring.activeCipher, root: root, now: Self.currentTime())
                report.transactions += 1
                working = try RecordStore.open(options, create: false, now: Self.currentTime())
            }
            report.activeKeyID = working.keyring.activeKeyID
            report.cipher = StoreCipher(working.keyring.activeCipher)
            progress?(report)
            let before = report
            let done = try working.continueRotation(root: root) { step in
                report.resealed = before.resealed + step.resealed
                report.damaged = before.damaged + step.damaged
                report.transactions = before.transactions + step.transactions
                report.retiredKeyIDs = step.retiredKeyIDs ?? []
                progress?(report)
            }
            report.retiredKeyIDs = done.retiredKeyIDs ?? []
            return report
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }
}
