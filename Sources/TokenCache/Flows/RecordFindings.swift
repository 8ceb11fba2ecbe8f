package import TokenCacheStorage
internal import TokenCacheRecords

/// What is wrong with one stored record, as `verify` reports it and `verify --repair` fixes it: where it is (the
/// database and key, which repair needs and no report shows), its fingerprint, why, and what a repair does with it.
package struct RecordFinding {
    package enum Problem: Equatable {
        /// It does not authenticate or decode: a repair removes it.
        case corrupt
        /// It decrypts but is not where FORMAT.md §4.3 puts it: a repair moves it to `target` when nothing is stored
        /// there, and removes it otherwise (the record stored there is the one its key names).
        case misplaced(target: [UInt8])
        /// A bucket's only access token under its entry key instead of the bucket prefix: valid, only slower to find.
        case loneUnderEntryKey
    }

    package var database: KeySpace
    /// The entity kind, nil for a `meta` record (the access-token cap, the kept MSAL sections).
    package var kind: EntityKind?
    package var key: [UInt8]
    package var fingerprint: String
    package var reason: String
    package var problem: Problem
    /// The stored value as found: a repair changes the record only if it is still exactly this (another process may
    /// have rewritten it meanwhile, which heals it).
    package var value: [UInt8]

    /// How a report names the record: its kind, or the `meta` key.
    package var recordName: String { kind?.rawValue ?? String(decoding: key, as: UTF8.self) }
}

extension CacheReader {
    /// Visits every record of the store and reports each one that has a problem (``RecordFinding``), one bucket of
    /// access tokens at a time, so that memory stays bounded by the largest bucket, not the store.
    /// - Parameters:
    ///   - checked: called with the number of records read so far, after each one.
    ///   - verified: called once per kind with the number of records that authenticated and decoded.
    ///   - sealedUnder: called with the data key id each sealed record names (0 for a value too short to name one).
    package func forEachFinding(
        checked: ((Int) -> Void)?, verified: (EntityKind, Int) -> Void, sealedUnder: ((UInt32) -> Void)? = nil,
        _ body: (RecordFinding) throws -> Void
    ) throws {
        var read = 0
        func step(_ value: UnsafeRawBufferPointer) {
            sealedUnder?(RecordEnvelope.keyID(of: value) ?? 0)
            read += 1
            checked?(read)
            // A whole-store walk: keep the pages read from piling up in this process's memory.
            if read % 512 == 0 { releaseScannedPages() }
        }
        for key in [RecordStore.accessTokenCapKey, RecordStore.foreignSectionsKey] {
            try transaction.withValue(in: KeySpace.meta, forKey: key) { value in value.withUnsafeBytes { value in sealedUnder?(RecordEnvelope.keyID(of: value) ?? 0) } }
        }
        try findDamagedMetaRecords(body)
        try findings(Account.self, step: step, verified: verified, body)
        try accessTokenFindings(step: step, verified: verified, body)
        try findings(RefreshToken.self, step: step, verified: verified, body)
        try findings(IDToken.self, step: step, verified: verified, body)
        try findings(AppMetadata.self, step: step, verified: verified, body)
    }

    /// The sealed `meta` records other than the header (checked at open): the access-token cap and the kept MSAL
    /// sections.
    private func findDamagedMetaRecords(_ body: (RecordFinding) throws -> Void) throws {
        for (key, check) in [
            (RecordStore.accessTokenCapKey, { try _ = self.store.accessTokenCap(in: self.transaction) }),
            (RecordStore.foreignSectionsKey, { try _ = self.store.foreignSections(in: self.transaction) }),
        ] as [([UInt8], () throws -> Void)] {
            do {
                try check()
            } catch let error as TokenCacheError where error.code == .corruptRecord {
                let value = try transaction.withValue(in: KeySpace.meta, forKey: key) { $0.withUnsafeBytes { Array($0) } } ?? []
                let consequence = key == RecordStore.accessTokenCapKey
                    ? "; no cap applies until it is set again (`cachetool cap`)" : "; the kept MSAL sections are lost to export"
                try body(RecordFinding(
                    database: KeySpace.meta, kind: nil, key: key, fingerprint: error.recordFingerprint ?? "",
                    reason: error.message + consequence,
                    problem: .corrupt, value: value
                ))
            }
        }
    }

    /// Records of a kind other than access tokens: each must authenticate and sit under the key its fields derive.
    private func findings<S: StorableEntity>(
        _ type: S.Type, step: (UnsafeRawBufferPointer) -> Void, verified: (EntityKind, Int) -> Void, _ body: (RecordFinding) throws -> Void
    ) throws {
        let database = KeySpace(S.kind)
        var good = 0
        try transaction.forEach(in: database, prefix: []) { key, value in try key.withUnsafeBytes { key in try value.withUnsafeBytes { value in
            step(value)
            let location = Array(key)
            switch store.decode(S.self, value: value, key: location) {
            case .failure(let damaged):
                try body(finding(S.kind, location, value, damaged.reason, .corrupt))
            case .success(let stored):
                good += 1
                let derived = S.storageKey(for: stored.entity.key, index: store.keyring.index)
                if derived != location {
                    try body(finding(S.kind, location, value, "stored under a key its fields do not derive", .misplaced(target: derived)))
                }
            }
            return true
        } } }
        verified(S.kind, good)
    }

    /// Access tokens, a bucket (the keys sharing a 32-byte prefix, adjacent in key order) at a time: a bucket's only
    /// token belongs under the prefix, each token of a larger bucket under its entry key (FORMAT.md §4.3).
    private func accessTokenFindings(step: (UnsafeRawBufferPointer) -> Void, verified: (EntityKind, Int) -> Void, _ body: (RecordFinding) throws -> Void) throws {
        let database = KeySpace.accessTokens
        let prefixCount = RecordStore.bucketPrefixCount
        /// One record of the bucket being read: where it is, its entry key (nil when it does not decode), and its value
        /// where a finding may name it. What the bucket holds is known only once it ends, and a view lives only as long
        /// as the callback that lent it, so the value is copied: none for a token under its entry key (no finding about
        /// it carries its value); into `prefixValue`, one buffer reused from bucket to bucket, for the token under the
        /// bucket prefix (a bucket's only one, the common case: no allocation per token); into its own array for any
        /// other (a token that does not decode, or sits where its fields do not derive: rare).
        var bucket: [(key: [UInt8], value: [UInt8]?, entryKey: [UInt8]?, reason: String?)] = []
        var prefixValue: [UInt8] = []
        var good = 0
        /// The value a finding about `record` names (nil in `bucket` and not under its entry key: under the prefix).
        func value(of record: (key: [UInt8], value: [UInt8]?, entryKey: [UInt8]?, reason: String?)) -> [UInt8] {
            record.value ?? prefixValue
        }
        func closeBucket() throws {
            defer { bucket.removeAll(keepingCapacity: true) }
            let lone = bucket.count == 1
            for record in bucket {
                guard let entryKey = record.entryKey else {
                    try body(finding(.accessToken, record.key, value(of: record), record.reason ?? "does not decode", .corrupt))
                    continue
                }
                let prefix = Array(entryKey.prefix(prefixCount))
                if record.key == entryKey {
                    if lone, store.placesLoneTokensAtBucketPrefix {
                        try body(finding(.accessToken, record.key, [UInt8](), "a bucket's only token under its entry key", .loneUnderEntryKey))
                    }
                } else if record.key == prefix, store.mayHoldLoneTokens {
                    if !lone {
                        try body(finding(.accessToken, record.key, value(of: record), "stored under its bucket prefix beside other tokens", .misplaced(target: entryKey)))
                    }
                } else {
                    try body(finding(.accessToken, record.key, value(of: record), "stored under a key its fields do not derive", .misplaced(target: entryKey)))
                }
            }
        }
        try transaction.forEach(in: database, prefix: []) { key, value in try key.withUnsafeBytes { key in try value.withUnsafeBytes { value in
            step(value)
            let location = Array(key)
            if let first = bucket.first, !first.key.prefix(prefixCount).elementsEqual(location.prefix(prefixCount)) { try closeBucket() }
            let entryKey: [UInt8]?, reason: String?
            switch store.decode(AccessToken.self, value: value, key: location) {
            case .failure(let damaged):
                (entryKey, reason) = (nil, damaged.reason)
            case .success(let stored):
                good += 1
                (entryKey, reason) = (AccessToken.storageKey(for: stored.entity.key, index: store.keyring.index), nil)
            }
            var copied: [UInt8]? = nil
            if entryKey != location {
                // At most one key of a bucket is its prefix, so the buffer holds that one's value until the bucket ends.
                if location.count == prefixCount {
                    prefixValue.removeAll(keepingCapacity: true)
                    prefixValue.append(contentsOf: value)
                } else {
                    copied = Array(value)
                }
            }
            bucket.append((location, copied, entryKey, reason))
            return true
        } } }
        try closeBucket()
        verified(.accessToken, good)
    }

    private func finding(
        _ kind: EntityKind, _ key: [UInt8], _ value: some Collection<UInt8>, _ reason: String, _ problem: RecordFinding.Problem
    ) -> RecordFinding {
        let database = KeySpace(kind)
        return RecordFinding(
            database: database, kind: kind, key: key, fingerprint: store.keyring.fingerprint(database: database.name, key: key), reason: reason,
            // A lone token under its entry key is placed by a walk of its own, not by its value: no copy (after an
            // interrupted upgrade there may be a million of them).
            problem: problem, value: problem == .loneUnderEntryKey ? [] : Array(value)
        )
    }
}
