package import TokenCacheStorage
package import TokenCacheRecords
package import TokenCacheSodium

// A data-key rotation (FORMAT.md §6.5): its cursor in `meta`, and the steps that re-seal the store under a new data key.
// An operator starts one with `TokenStore.rotateDataKey` (TokenCacheOperations); an open that upgrades a store to
// format version 3 starts one to the configured cipher, and every writable open finishes one it finds under way.
extension RecordStore {
    /// The rotation's cursor in `meta`: begun with the header that adds the new key, present while records are
    /// re-sealed. (Its steps are the rotation's own, below: each also decides when to retire the older keys.)
    static let dataKeyRotation = MaintenanceWalk(cursorKey: FormatConstants.rotationCursorKey)

    /// Whether a rotation is under way (its cursor exists).
    package func isRotationPending(in txn: any RecordReading) throws -> Bool {
        try Self.dataKeyRotation.isPending(in: txn)
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
    package static let rotationBatch = 1_024

    /// The databases re-sealed, in order; the cursor names one by its index here. In `meta`, only the sealed records
    /// (the access-token cap and the kept MSAL sections): the header and the cursors are plaintext.
    package static let rotatedDatabases = KeySpace.allCases

    /// Starts a rotation: the header with a new active data key sealing with `cipher`, and the cursor at the start, in
    /// one transaction. Returns the new key's id. The store must be reopened to seal under it.
    package func beginRotation(to cipher: RecordCipher, root: SecureKey, now: Int64) throws -> UInt32 {
        try checkWritable()
        guard cipher.isAvailable else { throw Self.unavailable(cipher, "cannot seal with it") }
        let rotated: Keyring
        do { rotated = try keyring.addingDataKey(createdAt: now, cipher: cipher, root: root) } catch {
            throw TokenCacheError(.invalidArgument, error.message)
        }
        let header = rotated.header.encoded()
        try backend.write { txn in
            try checkHeaderIsTheOpenedOne(in: txn)
            try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            try Self.dataKeyRotation.begin(in: txn)
        }
        return rotated.activeKeyID
    }

    /// One step of a rotation, in `txn`: re-seals under the active key up to ``rotationBatch`` records from the
    /// cursor that name another key. Returns the records re-sealed and those skipped (damaged: they cannot be
    /// opened, so they keep the key they name), and whether the end was reached (the caller then retires the keys).
    package func rotationStep(in txn: any RecordWriting) throws -> (resealed: Int, damaged: Int, finished: Bool) {
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

    /// Ends a rotation in `txn`: the header without the older keys (all but the first and the active), the first
    /// relabelled with the active key's cipher (nothing is sealed under it any more), the cursor removed. Returns the
    /// retired ids.
    package func finishRotation(root: SecureKey, in txn: any RecordWriting) throws -> [UInt32] {
        let retired = keyring.keyIDs.filter { $0 != keyring.keyIDs.first && $0 != keyring.activeKeyID }
        let header: [UInt8]
        do { header = try keyring.retiring(Set(retired), root: root, relabelingFirst: true).header.encoded() } catch {
            throw TokenCacheError(.internalError, "the remaining data keys could not be sealed again: \(error.message)")
        }
        try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
        _ = try txn.delete(in: KeySpace.meta, key: FormatConstants.rotationCursorKey)
        return retired
    }
}

/// What the transactions of a rotation did so far (``RecordStore/continueRotation(root:progress:)``).
package struct RotationProgress: Sendable {
    package var resealed = 0
    package var damaged = 0
    package var transactions = 0
    /// The data keys the last transaction retired; nil until it ran.
    package var retiredKeyIDs: [UInt32]? = nil

    package init() {}
}

extension RecordStore {
    /// Re-seals, in transactions of ``rotationBatch`` records, from the rotation's cursor to the end, then retires the
    /// older keys; `progress` is called after each transaction. This store must have been opened after the rotation
    /// began (it seals under the new key). Several processes may run it at once: each transaction reads the cursor,
    /// and one that finds the rotation finished by another stops.
    ///
    /// Every transaction requires the stored header to be the one this store was opened with, not merely one it can
    /// follow: the last writes a header built from this store's keyring, which must not drop a data key another process
    /// added meanwhile, nor undo its change of root key. Otherwise it throws `.conflict`, having written nothing.
    @discardableResult
    package func continueRotation(root: SecureKey, progress: ((RotationProgress) -> Void)? = nil) throws -> RotationProgress {
        var report = RotationProgress()
        while report.retiredKeyIDs == nil {
            let step = try backend.write { txn in
                // Another process may have finished it.
                guard try isRotationPending(in: txn) else { return (resealed: 0, damaged: 0, retired: [UInt32]?.some([])) }
                try checkHeaderIsTheOpenedOne(in: txn)
                let step = try rotationStep(in: txn)
                return (step.resealed, step.damaged, step.finished ? try finishRotation(root: root, in: txn) : nil)
            }
            report.resealed += step.resealed
            report.damaged += step.damaged
            report.transactions += 1
            report.retiredKeyIDs = step.retired
            progress?(report)
        }
        return report
    }
}
