/// The keys every backend accepts: 1 to 511 bytes, LMDB's default limit, so that a key one backend takes is taken
/// by all (the format's keys are far shorter; FORMAT.md §4).
package enum StorageKeyLimits {
    package static let maximumSize = 511

    /// Refuses a key LMDB would refuse: empty (unless `allowingEmpty`, for a scan from the first key) or too long.
    package static func check(_ key: [UInt8], allowingEmpty: Bool = false) throws(StorageError) {
        guard allowingEmpty || !key.isEmpty, key.count <= maximumSize else {
            throw StorageError(.invalidArgument, "a key of \(key.count) bytes (keys are 1 to \(maximumSize))")
        }
    }
}
