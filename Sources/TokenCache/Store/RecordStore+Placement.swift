internal import TokenCacheSodium
package import TokenCacheStorage
internal import TokenCacheRecords

/// Where access tokens sit in their bucket (FORMAT.md §4.3, format version 2): a bucket's only token under the
/// 32-byte bucket prefix itself, each token of a bucket of two or more under its 48-byte entry key.
///
/// Why: most buckets hold one token. Positioned at the bucket prefix, a lookup that finds a record stored under
/// exactly the prefix knows it is the bucket's only one, so it need not step on to find the bucket's end (a second
/// B-tree step, often to another page). No record is added for this. The measured gain is in Benchmarks/README.md.
extension RecordStore {
    /// Length of a bucket prefix `P(hid) ‖ D("at-bucket", …)`, and so of a lone token's key.
    package static let bucketPrefixCount = 2 * FormatConstants.indexDigestCount

    /// Whether a token may be stored under its bucket prefix (format version 2 on): readers look there, and writers
    /// move one out when a second token joins its bucket (a MUST of §4.3, whichever backend writes). A version-1
    /// store, opened read-only, keeps every token under its entry key and is read the same way.
    var mayHoldLoneTokens: Bool { keyring.header.readVersion >= 2 }

    /// Whether writers put a bucket's only token under the bucket prefix (a SHOULD of §4.3): when the store may hold
    /// lone tokens and the backend's layout gains from the shorter key (LMDB does; memory does not).
    package var placesLoneTokensAtBucketPrefix: Bool { mayHoldLoneTokens && backend.lonePlacement == .underPrefix }

    /// The entry key (`P ‖ D("at-entry", …)`) of the token stored under `key`, computed from its own fields; nil when
    /// the record cannot be read.
    func entryKey(ofTokenAt key: [UInt8], value: UnsafeRawBufferPointer) -> [UInt8]? {
        guard case .success(let stored) = decode(AccessToken.self, value: value, key: key) else { return nil }
        return entryKey(of: stored)
    }

    /// The entry key of a decoded token, from its own fields.
    func entryKey(of stored: StoredEntity<AccessToken>) -> [UInt8] { AccessToken.storageKey(for: stored.entity.key, index: keyring.index) }

    /// The record under the bucket prefix of `entryKey`, decoded, with that prefix; nil when there is none (or the
    /// store holds no lone tokens). Whether it is the token with `entryKey` only its fields tell.
    private func loneToken(
        inBucketOf entryKey: [UInt8], in txn: any RecordReading
    ) throws -> (prefix: [UInt8], token: Result<StoredEntity<AccessToken>, CorruptRecord>)? {
        guard mayHoldLoneTokens else { return nil }
        let prefix = Array(entryKey.prefix(Self.bucketPrefixCount))
        let token = try txn.withValue(in: KeySpace.accessTokens, forKey: prefix) {
            $0.withUnsafeBytes { decode(AccessToken.self, value: $0, key: prefix) }
        }
        return token.map { (prefix, $0) }
    }

    /// The key the token with entry key `entryKey` is stored under in `txn`: the entry key, or its bucket prefix
    /// when it is the bucket's lone token; nil when there is no such token.
    ///
    /// A damaged record under the prefix may be the token asked for. With `damagedMayMatch` (reads, conditional
    /// writes) its location is then the prefix, so that the damage is reported as for a damaged record under the
    /// asked key; without (unconditional writes) it is passed over and left for repair, as damaged records are.
    package func accessTokenLocation(entryKey: [UInt8], damagedMayMatch: Bool, in txn: any RecordReading) throws -> [UInt8]? {
        if try txn.withValue(in: KeySpace.accessTokens, forKey: entryKey, { _ in true }) != nil { return entryKey }
        switch try loneToken(inBucketOf: entryKey, in: txn) {
        case nil: return nil  // no record under the prefix
        case (let prefix, .failure)?: return damagedMayMatch ? prefix : nil
        case (let prefix, .success(let stored))?: return self.entryKey(of: stored) == entryKey ? prefix : nil
        }
    }

    /// The token with entry key `entryKey` as stored in `txn`, opened once: under the entry key, or under the bucket
    /// prefix when it is the bucket's lone token (whose entry key only its decoded fields tell); nil when there is
    /// none, or when the record there cannot be read (damage is left for repair). What ``accessTokenLocation`` and a
    /// get would find, without opening a lone token twice.
    func storedAccessToken(entryKey: [UInt8], in txn: any RecordReading) throws -> StoredEntity<AccessToken>? {
        let underEntryKey = try txn.withValue(in: KeySpace.accessTokens, forKey: entryKey) {
            $0.withUnsafeBytes { decode(AccessToken.self, value: $0, key: entryKey) }
        }
        if let underEntryKey { return try? underEntryKey.get() }
        guard case (_, .success(let stored))? = try loneToken(inBucketOf: entryKey, in: txn), self.entryKey(of: stored) == entryKey
        else { return nil }
        return stored
    }

    /// Where a token with entry key `entryKey`, not yet stored, goes: under the bucket prefix when the bucket is
    /// empty, so that the common write needs no move afterwards; otherwise under its entry key.
    /// - Parameter bucketKnownEmpty: The caller saw the bucket empty in this transaction: no read is needed.
    func newAccessTokenLocation(entryKey: [UInt8], in txn: any RecordReading, bucketKnownEmpty: Bool = false) throws -> [UInt8] {
        guard placesLoneTokensAtBucketPrefix else { return entryKey }
        let prefix = Array(entryKey.prefix(Self.bucketPrefixCount))
        if bucketKnownEmpty { return prefix }
        var empty = true
        try txn.forEach(in: KeySpace.accessTokens, prefix: prefix) { _, _ in
            empty = false
            return false
        }
        return empty ? prefix : entryKey
    }

    /// Re-seals the record stored under `source` as the record under `destination` (the same plaintexts, so the
    /// same revision and times, a body and summary of schema 1 re-encoded in schema 2; fresh nonces, the active data key) and
    /// removes it from `source`. Returns false,
    /// leaving everything as it was, when the record cannot be opened.
    package func move(_ database: KeySpace, from source: [UInt8], to destination: [UInt8], in txn: any RecordWriting) throws -> Bool {
        let sourceSlot = slot(database, source)
        let opened = try txn.withValue(in: database, forKey: source) { value in value.withUnsafeBytes { value in
            Result { () throws(FormatError) in
                let body = try openBodyPlaintext(value, slot: sourceSlot)
                let summary = try RecordEnvelope.open(.summary, of: value, slot: sourceSlot, keys: recordKey)
                // A record that authenticates but does not parse is re-sealed as it is: moved, it stays readable by its
                // key (a record left under a key a rotation retires could never be read again).
                return (summary: summary.map { summary in (try? RecordSummary.upgraded(summary)) ?? summary },
                        body: (try? RecordBody.upgraded(body)) ?? body)
            }
        } }
        guard case .success(let plaintexts)? = opened else { return false }
        try txn.delete(in: database, key: source)
        try putSealed(summary: plaintexts.summary, body: plaintexts.body, database: database, key: destination, into: txn)
        return true
    }

    /// Puts the tokens of the bucket `prefix` where §4.3 says, after a change to the bucket: with two or more, a token
    /// found under the prefix back under its entry key (always); a lone token under the prefix (when this store
    /// places them). A token that cannot be read (damaged) stays where it is; readers cope (FORMAT.md §4.3, §9). The
    /// first two keys decide.
    package func placeTokens(ofBucket prefix: [UInt8], in txn: any RecordWriting) throws {
        guard mayHoldLoneTokens else { return }
        let database = KeySpace.accessTokens
        var keys: [[UInt8]] = []
        try txn.forEach(in: database, prefix: prefix) { key, _ in key.withUnsafeBytes { key in
            keys.append(Array(key))
            return keys.count < 2
        } }
        if keys.count == 1, keys[0].count != prefix.count, placesLoneTokensAtBucketPrefix {
            _ = try move(KeySpace.accessTokens, from: keys[0], to: prefix, in: txn)
        } else if keys.count >= 2, keys[0].count == prefix.count {
            let entryKey = try txn.withValue(in: database, forKey: prefix) { value in value.withUnsafeBytes { value in self.entryKey(ofTokenAt: prefix, value: value) } }
            if let entryKey = entryKey ?? nil { _ = try move(KeySpace.accessTokens, from: prefix, to: entryKey, in: txn) }
        }
    }

    /// The upgrade's placement of lone tokens (FORMAT.md §7): a maintenance walk under the `lone-token-placement`
    /// cursor. Each batch leaves the store valid (readers accept a lone token under either key).
    static let loneTokenPlacement = MaintenanceWalk(cursorKey: FormatConstants.placementCursorKey)

    /// Moves lone tokens under their bucket prefix from the placement cursor on, in write transactions of at most
    /// ``placementBatch`` records each, until the whole database is done; then removes the cursor.
    func finishLoneTokenPlacement() throws {
        try Self.loneTokenPlacement.run(on: self) { start, txn in
            // A backend that keeps every token under its entry key has nothing to place: the cursor just goes.
            guard placesLoneTokensAtBucketPrefix else { return nil }
            return try placeLoneTokens(from: start, in: txn)
        }
    }

    /// Records one placement transaction reads at most (whole buckets: it may run over by one bucket).
    static let placementBatch = 8192

    /// Moves the lone tokens of the buckets from key `start` on, stopping at a bucket boundary after about
    /// `limit` records; returns the key to resume at, nil when the end of the database was reached.
    package func placeLoneTokens(from start: [UInt8], limit: Int = placementBatch, in txn: any RecordWriting) throws -> [UInt8]? {
        var lone: [[UInt8]] = []
        var current: (prefix: [UInt8], key: [UInt8], count: Int)? = nil
        var resume: [UInt8]? = nil
        var read = 0
        func close() { if let current, current.count == 1, current.key.count > Self.bucketPrefixCount { lone.append(current.key) } }
        try txn.forEach(in: KeySpace.accessTokens, from: start) { key, _ in key.withUnsafeBytes { key in
            guard key.count >= Self.bucketPrefixCount else { return true }  // not a token key; `verify` reports it
            let prefix = UnsafeRawBufferPointer(rebasing: key[..<Self.bucketPrefixCount])
            if let open = current, open.prefix.elementsEqual(prefix) {
                current!.count += 1
            } else {
                close()
                if read >= limit {
                    resume = Array(prefix)
                    return false
                }
                current = (Array(prefix), Array(key), 1)
            }
            read += 1
            return true
        } }
        if resume == nil { close() }
        for key in lone {
            _ = try move(KeySpace.accessTokens, from: key, to: Array(key.prefix(Self.bucketPrefixCount)), in: txn)
        }
        // The placement walks the whole database: keep its memory to one batch's pages.
        releaseScannedPages(in: txn)
        return resume
    }
}
