public import TokenCache
internal import TokenCacheRecords
internal import TokenCacheStorage
internal import TokenCacheSodium

// Rekeying a store: replacing the keys that protect it, whole. Two operations, both here: a new root key
// (``TokenStore/changeRootKey(to:passphraseCost:)``, one header write) and a new data key every record is re-sealed
// under (``TokenStore/rotateDataKey(progress:)``, with its steps below). Both are ordinary write transactions through
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
                try store.checkHeaderUnchanged(in: txn)
                try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            }
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
    /// From the first transaction on, handles opened before it (this one included, in this process or others, other
    /// hosts of a shared store too) keep reading (they learn the new data key from the header when they first meet a
    /// record sealed under it) and writing: their next write finds the changed header, opens it with their root key
    /// and seals under the new key from then on. A handle that cannot open the new header (it was also given a new
    /// root key meanwhile) refuses to write (`.conflict`: the header changed) until opened again.
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
            var working = try RecordStore.open(configuration.storeOptions, create: false, now: Self.currentTime())
            let root = try RootKey.derive(
                from: configuration.keySource, header: working.keyring.header, maximumCost: configuration.maximumPassphraseCost
            )
            report.resumed = try working.backend.read { try working.isRotationPending(in: $0) }
            if !report.resumed {
                _ = try working.beginRotation(root: root, now: Self.currentTime())
                report.transactions += 1
                working = try RecordStore.open(configuration.storeOptions, create: false, now: Self.currentTime())
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

/// Re-sealing every record under a new data key (FORMAT.md §6.5), in bounded transactions under a cursor in `meta`.
///
/// The rotation starts with one transaction that adds the new key to the header (as the active one: every write from
/// then on seals under it, and a writer that opened the store before follows it at its next write) and puts the
/// cursor. Each later transaction re-seals up to ``rotationBatch`` records that name an older key, in place (the same
/// plaintexts, fresh nonces), and moves the cursor on. The last one, which finds nothing left, retires the older keys
/// from the header (all but the first, which roots the blind index and the fingerprints) and removes the cursor. Every
/// transaction leaves a valid store that every key in its header opens, so a crash loses nothing and the next
/// rotation call continues from the cursor.
extension RecordStore {
    /// Records one rotation transaction reads at most.
    static let rotationBatch = 1_024

    /// The databases re-sealed, in order; the cursor names one by its index here. In `meta`, only the sealed records
    /// (the access-token cap and the kept MSAL sections): the header and the cursors are plaintext.
    static let rotatedDatabases = KeySpace.allCases

    /// Starts a rotation: the header with a new active data key, and the cursor at the start, in one transaction.
    /// Returns the new key's id. The store must be reopened to seal under it.
    func beginRotation(root: SecureKey, now: Int64) throws -> UInt32 {
        try checkWritable()
        let rotated: Keyring
        do { rotated = try keyring.addingDataKey(createdAt: now, root: root) } catch {
            throw TokenCacheError(.invalidArgument, error.message)
        }
        let header = rotated.header.encoded()
        try backend.write { txn in
            try checkHeaderUnchanged(in: txn)
            try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            try txn.put(in: KeySpace.meta, key: FormatConstants.rotationCursorKey, value: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return rotated.activeKeyID
    }

    /// One step of a rotation, in `txn`: re-seals under the active key up to ``rotationBatch`` records from the
    /// cursor that name another key. Returns the records re-sealed and those skipped (damaged: they cannot be
    /// opened, so they keep the key they name), and whether the end was reached (the caller then retires the keys).
    func rotationStep(in txn: any RecordWriting) throws -> (resealed: Int, damaged: Int, finished: Bool) {
        let cursor = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.rotationCursorKey) { $0.withUnsafeBytes { Array($0) } } ?? []
        var databaseIndex = Int(cursor.first ?? 0)
        var start = Array(cursor.dropFirst())
        var read = 0, resealed = 0, damaged = 0
        while databaseIndex < Self.rotatedDatabases.count {
            let database = Self.rotatedDatabases[databaseIndex]
            var stale: [[UInt8]] = []
            var resume: [UInt8]? = nil
            try txn.forEach(in: database, from: start) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                if read >= Self.rotationBatch {
                    resume = Array(key)
                    return false
                }
                read += 1
                let sealed = database != KeySpace.meta || Self.isSealedMetaKey(key)
                if sealed, let id = RecordEnvelope.keyID(of: value), id != keyring.activeKeyID { stale.append(Array(key)) }
                return true
            } } }
            for key in stale {
                if try move(database, from: key, to: key, in: txn) { resealed += 1 } else { damaged += 1 }
            }
            // A rotation walks the whole store: keep its memory to one batch's pages.
            releaseScannedPages(in: txn)
            if let resume {
                try ([UInt8(databaseIndex)] + resume).withUnsafeBytes {
                    try txn.put(in: KeySpace.meta, key: FormatConstants.rotationCursorKey, value: $0)
                }
                return (resealed, damaged, false)
            }
            databaseIndex += 1
            start = []
        }
        return (resealed, damaged, true)
    }

    /// Ends a rotation in `txn`: the header without the older keys (all but the first and the active), the cursor
    /// removed. Returns the retired ids.
    func finishRotation(root: SecureKey, in txn: any RecordWriting) throws -> [UInt32] {
        let retired = keyring.keyIDs.filter { $0 != keyring.keyIDs.first && $0 != keyring.activeKeyID }
        let header: [UInt8]
        do { header = try keyring.retiring(Set(retired), root: root).header.encoded() } catch {
            throw TokenCacheError(.internalError, "the remaining data keys could not be sealed again: \(error.message)")
        }
        try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
        _ = try txn.delete(in: KeySpace.meta, key: FormatConstants.rotationCursorKey)
        return retired
    }
}
