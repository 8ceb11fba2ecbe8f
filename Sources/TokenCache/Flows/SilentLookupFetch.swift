internal import TokenCacheStorage
internal import TokenCacheRecords

/// One record of a bucket, as the fetch lends it: views into the backend's storage, valid until the transaction's next
/// write or its end (taken with ``RawSpan/unsafeBytesValidForTheTransaction``, below).
struct BucketEntry {
    let key: UnsafeRawBufferPointer
    let value: UnsafeRawBufferPointer
}

/// The second step of a silent lookup: what one bucket holds, from one range read through the seam.
///
/// Most buckets hold one token, so the read keeps the first two entries and stops: a token stored under the bucket
/// prefix itself is the bucket's lone token (FORMAT.md §4.3), and the range ends there; otherwise the bucket's end is
/// found by one more step. A bucket of more than two (rare: caches imported from elsewhere) is read whole by a second
/// walk, when the judgement asks for it.
enum BucketContents {
    case empty
    /// Under the bucket prefix: the bucket's only token.
    case lone(BucketEntry)
    /// The only token, under its entry key (a version-1 store, or a backend that keeps every token there).
    case one(BucketEntry)
    /// Exactly two tokens (the common case of several: kept without an array).
    case two(BucketEntry, BucketEntry)
    /// Several tokens, all of them.
    case several([BucketEntry])
    /// More than two tokens, not read yet.
    case more
}

extension BucketContents {
    /// The contents of the access-token bucket `prefix` in `reader`'s snapshot. (A static function on the existential,
    /// not a generic extension of the protocol: the existential's methods are called directly, with no unspecialised
    /// generic frame between the lookup and the range read.)
    static func read(_ prefix: [UInt8], in reader: any RecordReading) throws -> BucketContents {
        var first: BucketEntry? = nil, second: BucketEntry? = nil
        var count = 0
        var lone = false
        try reader.forEach(in: KeySpace.accessTokens, prefix: prefix) { key, value in
            count += 1
            switch count {
            case 1:
                first = BucketEntry(key: key.unsafeBytesValidForTheTransaction, value: value.unsafeBytesValidForTheTransaction)
                if key.byteCount == prefix.count {
                    lone = true
                    return false
                }
                // Most often the bucket's only token, decrypted next: its bytes load while the backend finds the
                // bucket's end (often on another page).
                reader.prefetch(value)
            case 2: second = BucketEntry(key: key.unsafeBytesValidForTheTransaction, value: value.unsafeBytesValidForTheTransaction)
            default: break
            }
            return count <= 2
        }
        switch (first, second) {
        case (nil, _): return .empty
        case (let only?, nil): return lone ? .lone(only) : .one(only)
        case (let first?, let second?): return count == 2 ? .two(first, second) : .more
        }
    }
}

extension RecordReading {

    /// Every token of the access-token bucket `prefix`, without one stored under the prefix itself when `skippingLone`
    /// is set.
    func accessTokens(inBucket prefix: [UInt8], skippingLone: Bool) throws -> [BucketEntry] {
        var entries: [BucketEntry] = []
        try forEach(in: KeySpace.accessTokens, prefix: prefix) { key, value in
            if !skippingLone || key.byteCount != prefix.count {
                entries.append(BucketEntry(key: key.unsafeBytesValidForTheTransaction, value: value.unsafeBytesValidForTheTransaction))
            }
            return true
        }
        return entries
    }
}

extension RawSpan {
    /// The view's bytes as a pointer that outlives the callback that lent the view: THE ONE AUDITED ESCAPE of the
    /// storage seam, for the silent lookup's bucket read only (fileprivate; `SpanEscapeTests` refuses it, and any
    /// other escape of a span's pointer, elsewhere in `Sources/`).
    ///
    /// The lookup keeps the first two entries of a bucket past the range read's callback and decrypts the one it
    /// chose after seeing where the bucket ends: one B-tree step saved per lookup, and no copy of the record (a
    /// malloc and about 1.8 KB of copying per hit). That is sound because every backend keeps what it lent valid
    /// until the transaction's next write or its end (``RecordReading``: LMDB's views point into the map, the
    /// in-memory backend's into values its snapshot keeps, `FetchedRecords` and `PlannedWrite` own their bytes),
    /// and the lookup reads the pointer only inside its read transaction, which makes no write.
    @inline(__always)
    fileprivate var unsafeBytesValidForTheTransaction: UnsafeRawBufferPointer { withUnsafeBytes { $0 } }
}

/// Two entries as a collection, without an array.
struct BucketEntryPair: RandomAccessCollection {
    let first: BucketEntry
    let second: BucketEntry
    var startIndex: Int { 0 }
    var endIndex: Int { 2 }
    subscript(position: Int) -> BucketEntry { position == 0 ? first : second }
}
