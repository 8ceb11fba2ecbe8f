package import TokenCacheStorage
internal import TokenCacheRecords

// A data-key rotation's cursor in `meta` (FORMAT.md §6.5), as far as the core reads it: `verify` reports a rotation
// left unfinished. The rotation itself, which writes and removes the cursor, is an operator's command
// (TokenCacheOperations).
extension RecordStore {
    /// Whether a rotation is under way (its cursor exists).
    package func isRotationPending(in txn: any RecordReading) throws -> Bool {
        try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.rotationCursorKey) { _ in true } ?? false
    }
}
