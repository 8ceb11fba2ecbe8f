package import TokenCacheStorage
internal import TokenCacheRecords
internal import TokenCacheSodium

/// The store's optional cap on the number of access tokens, kept in the store itself so that every process writing
/// to it enforces the same bound: `meta` / `access-token-cap` (FORMAT.md §3 and §5.6), a sealed record (no summary)
/// whose body holds one integer field, `maximum_count`. No record, no cap.
///
/// Sealed like every record rather than plaintext: it is not secret, but a reader must be able to trust it, and the
/// envelope binds it to this store and slot.
extension RecordStore {
    static let accessTokenCapKey: [UInt8] = Array("access-token-cap".utf8)
    static let accessTokenCapField = "maximum_count"

    /// The cap, or nil when none is set.
    /// - Throws: `.corruptRecord` when the record does not authenticate or holds no valid count.
    package func accessTokenCap(in txn: any RecordReading) throws -> Int? {
        let key = Self.accessTokenCapKey
        let decoded = try txn.withValue(in: KeySpace.meta, forKey: key) { value in value.withUnsafeBytes { value in
            Result { () throws(FormatError) -> Int in
                let plaintext = try openBodyPlaintext(value, slot: slot(KeySpace.meta, key))
                return try plaintext.withUnsafeBytes { bytes in
                    Result { () throws(FormatError) -> Int in try Self.accessTokenCap(in: try DecodedBody(borrowing: bytes).fields) }
                }.get()
            }
        } }
        switch decoded {
        case nil: return nil
        case .success(let cap)?: return cap
        case .failure(let error)?:
            let fingerprint = keyring.fingerprint(database: KeySpace.meta.name, key: key)
            throw TokenCacheError(
                .corruptRecord, "the access-token cap (record \(fingerprint)) does not decode: \(error.message)",
                recordFingerprint: fingerprint)
        }
    }

    /// Sets the cap (nil: removes it).
    package func setAccessTokenCap(_ cap: Int?, now: Int64, in txn: any RecordWriting) throws {
        let key = Self.accessTokenCapKey
        guard let cap else {
            _ = try txn.delete(in: KeySpace.meta, key: key)
            return
        }
        try putSealed(summary: nil, body: Self.accessTokenCapBody(cap, now: now).encode(), database: KeySpace.meta, key: key, into: txn)
    }

    /// The cap a cap record's body holds: exactly one field, `maximum_count`, an integer of at least 1.
    static func accessTokenCap(in fields: FieldTable) throws(FormatError) -> Int {
        guard fields.entries.count == 1, fields.name(at: 0) == accessTokenCapField, fields.entries[0].type == 0x02 else {
            throw FormatError("the access-token cap record does not hold one integer field \(accessTokenCapField)")
        }
        let count = fields.integer(at: 0)
        guard count >= 1 else { throw FormatError("the access-token cap is \(count), below 1") }
        return Int(clamping: count)
    }

    /// The body of the cap record for `cap`.
    static func accessTokenCapBody(_ cap: Int, now: Int64) -> RecordBody {
        var fields = FieldMap()
        fields[accessTokenCapField] = .integer(Int64(cap))
        return RecordBody(revision: 1, updatedAt: now, fields: fields)
    }
}
