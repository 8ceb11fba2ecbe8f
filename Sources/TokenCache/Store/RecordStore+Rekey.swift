internal import TokenCacheRecords
internal import TokenCacheStorage

extension RecordStore {
    /// Seals every data key under a root key from `source` instead of the current one, in one write transaction
    /// (FORMAT.md §6.3): only the store header changes; the records, sealed under the data keys, stay as they are.
    ///
    /// Either the old root key opens the store or the new one, never neither: the header is one value, replaced in one
    /// commit, and a key file named by `source` must already exist (durably) when it does.
    /// - Throws: ``TokenCacheError``: `.conflict` if the header changed since this store was opened (another rekey or an
    ///   upgrade: nothing was written), `.readOnly`, the errors of reading the new key, and of the write.
    func rekey(to source: KeySource, cost: PassphraseCost, maximumCost: PassphraseCost) throws {
        try checkWritable()
        let generated = try RootKey.generate(from: source, cost: cost, maximumCost: maximumCost)
        var target = keyring.header
        target.rootKind = RootKey.kind(of: source)
        target.salt = generated.salt
        target.opsLimit = generated.cost?.opsLimit ?? 0
        target.memLimit = generated.cost?.memLimit ?? 0
        let header: [UInt8]
        do {
            header = try keyring.rewrapped(as: target, root: generated.root).encoded()
        } catch {
            throw TokenCacheError(.internalError, "the data keys could not be sealed under the new root key: \(error.message)")
        }
        do {
            try backend.write { txn in
                try checkHeaderUnchanged(in: txn)
                try header.withUnsafeBytes { try txn.put(in: DatabaseName.meta, key: FormatConstants.headerKey, value: $0) }
            }
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
    }
}
