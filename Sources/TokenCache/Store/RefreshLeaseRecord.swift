internal import TokenCacheStorage
internal import TokenCacheRecords
internal import TokenCacheSodium

/// A refresh lease as stored: `meta` / `refresh-lease/` followed by the lowercase hex of the leased refresh token's
/// storage key (FORMAT.md §5.7), a sealed record (no summary) whose body holds `expires_at` (Unix milliseconds),
/// `holder` (32 lowercase hex digits, random per refresh) and `pid`, and, once the token endpoint refused the
/// redemption, `refused_revision`: the revision of the refresh token it refused.
///
/// The name carries the refresh token's storage key, which is already a keyed hash (§4): it says no more than the
/// `refresh_tokens` key beside it. Sealed so that a reader can trust it, like every record.
extension RecordStore {
    package static let refreshLeasePrefix: [UInt8] = Array("refresh-lease/".utf8)

    /// The `meta` key of the lease on the refresh token stored under `refreshTokenKey`.
    static func refreshLeaseKey(refreshTokenKey: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var key = refreshLeasePrefix
        key.reserveCapacity(refreshLeasePrefix.count + 2 * refreshTokenKey.count)
        for byte in refreshTokenKey {
            key.append(digits[Int(byte >> 4)])
            key.append(digits[Int(byte & 0x0f)])
        }
        return key
    }

    /// Whether a `meta` key names a refresh lease.
    package static func isRefreshLeaseKey(_ key: some Collection<UInt8>) -> Bool { key.starts(with: refreshLeasePrefix) }

    /// Whether a `meta` key names a sealed record (FORMAT.md §5.5–§5.7), as opposed to the header and the plaintext
    /// cursors.
    package static func isSealedMetaKey(_ key: some Collection<UInt8>) -> Bool {
        key.elementsEqual(accessTokenCapKey) || key.elementsEqual(foreignSectionsKey) || isRefreshLeaseKey(key)
    }

    /// What a lease record holds.
    struct StoredRefreshLease: Equatable {
        var holder: String
        var expiresAt: Int64
        var pid: Int64
        /// The revision of the refresh token whose redemption the token endpoint refused under this lease: that token
        /// is not redeemed again (a second redemption of a refused token is what reuse detection punishes).
        var refusedRevision: Int64? = nil
    }

    /// The lease under `key`; nil when there is none, or when it does not open (a damaged lease binds nobody: the
    /// next taker overwrites it).
    func refreshLease(at key: [UInt8], in txn: any RecordReading) throws -> StoredRefreshLease? {
        try txn.withValue(in: KeySpace.meta, forKey: key) { value in value.withUnsafeBytes { value in
            try? refreshLease(sealed: value, key: key)
        } } ?? nil
    }

    /// The lease a sealed value under `key` holds.
    func refreshLease(sealed value: UnsafeRawBufferPointer, key: [UInt8]) throws(FormatError) -> StoredRefreshLease {
        try refreshLeaseAndWriteTime(sealed: value, key: key).lease
    }

    /// The lease a sealed value under `key` holds, and when it was written (the body's `updated_at`: the lease clock's
    /// seconds when it was taken or last renewed).
    func refreshLeaseAndWriteTime(sealed value: UnsafeRawBufferPointer, key: [UInt8]) throws(FormatError) -> (lease: StoredRefreshLease, writtenAt: Int64) {
        let plaintext = try openBodyPlaintext(value, slot: slot(KeySpace.meta, key))
        return try plaintext.withUnsafeBytes { bytes in
            Result { () throws(FormatError) -> (lease: StoredRefreshLease, writtenAt: Int64) in
                let body = try DecodedBody(borrowing: bytes)
                return (try Self.refreshLease(in: body.fields), body.updatedAt)
            }
        }.get()
    }

    /// Stores `lease` under `key`.
    func putRefreshLease(_ lease: StoredRefreshLease, at key: [UInt8], now: Int64, in txn: any RecordWriting) throws {
        try putSealed(summary: nil, body: Self.refreshLeaseBody(lease, now: now).encode(), database: KeySpace.meta, key: key, into: txn)
    }

    /// A lease body's fields: exactly `expires_at` (integer), `holder` (text) and `pid` (integer), in that order, then
    /// `refused_revision` (integer) in a refusal record.
    static func refreshLease(in fields: FieldTable) throws(FormatError) -> StoredRefreshLease {
        let count = fields.entries.count
        guard count == 3 || count == 4, fields.name(at: 0, equals: "expires_at"), fields.entries[0].type == 0x02,
            fields.name(at: 1, equals: "holder"), fields.entries[1].type == 0x01, fields.name(at: 2, equals: "pid"),
            fields.entries[2].type == 0x02,
            count == 3 || (fields.name(at: 3, equals: "refused_revision") && fields.entries[3].type == 0x02)
        else { throw FormatError("a refresh lease record does not hold exactly expires_at, holder, pid and an optional refused_revision") }
        return StoredRefreshLease(
            holder: fields.string(at: 1), expiresAt: fields.integer(at: 0), pid: fields.integer(at: 2),
            refusedRevision: count == 4 ? fields.integer(at: 3) : nil
        )
    }

    /// The body of a lease record.
    static func refreshLeaseBody(_ lease: StoredRefreshLease, now: Int64) -> RecordBody {
        var fields = FieldMap()
        fields["expires_at"] = .integer(lease.expiresAt)
        fields["holder"] = .text(Array(lease.holder.utf8))
        fields["pid"] = .integer(lease.pid)
        if let refused = lease.refusedRevision { fields["refused_revision"] = .integer(refused) }
        return RecordBody(revision: 1, updatedAt: now, fields: fields)
    }
}
