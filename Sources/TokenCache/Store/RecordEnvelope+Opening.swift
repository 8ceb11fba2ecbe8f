package import TokenCacheRecords
internal import TokenCacheSodium

extension RecordEnvelope {
    /// Authenticates and decrypts one section into a temporary buffer that is lent to `body` and wiped when it
    /// returns: the lookup path reads summaries without a heap allocation. Returns nil when the summary is asked
    /// for and the record has none. `key` is the record's LMDB key (its bytes are bound into the associated data).
    ///
    /// It lives beside the store's readers, not in the record module, because it is generic over what a reader
    /// returns: here each reader gets a specialised copy, while a generic across the module boundary runs
    /// unspecialised (about 2,800 instructions more per lookup, measured with callgrind).
    package static func withOpened<R>(
        _ section: Section, of value: UnsafeRawBufferPointer, storeID: [UInt8], database: String, key: UnsafeRawBufferPointer,
        keys: (UInt32) -> RecordKey?, _ body: (UnsafeRawBufferPointer) throws(FormatError) -> R
    ) throws(FormatError) -> R? {
        guard let located = try locate(section, of: value, keys: keys) else { return nil }
        return try Memory.withWipedTemporary(byteCount: located.plaintextCount) { output throws(FormatError) -> R in
            try decrypt(located, storeID: storeID, database: database, key: key, into: output)
            return try body(UnsafeRawBufferPointer(output))
        }
    }
}
