internal import TokenCacheStorage
internal import TokenCacheRecords

/// What ``CacheReader/verify(progress:)`` found.
public struct VerificationReport: Sendable {
    /// Records that authenticated and decoded, by kind.
    public var verified: [EntityKind: Int] = [:]
    /// Records that failed authentication or decoding.
    public var corrupt: [CorruptRecord] = []
    /// Records that decrypt but sit under a key their own fields do not derive (FORMAT.md §8, invariant 3): a
    /// writer bug, never produced by this library.
    public var misplaced: [CorruptRecord] = []
    /// Access tokens alone in their bucket but stored under their entry key instead of the bucket prefix (FORMAT.md
    /// §4.3): valid, only slower to look up. Left by a placement still under way after an upgrade (the next writable
    /// open resumes it); not a problem.
    public var loneTokensUnderEntryKey = 0
    /// Set when LMDB's two meta pages do not hold the transaction ids its alternation leaves (see FORMAT.md §9): one
    /// of them is damaged, and if it was the newer one, the last committed transaction was silently rolled back.
    public var metaPageProblem: String?

    /// No corrupt or misplaced record and no meta-page problem (lone tokens under their entry key do not count).
    public var isClean: Bool { corrupt.isEmpty && misplaced.isEmpty && metaPageProblem == nil }
}

extension CacheReader {
    /// Decrypts every record of the store and checks that each sits under the storage key its fields derive.
    /// Reads everything: a maintenance operation, not for hot paths.
    /// - Parameter progress: called with the number of records checked so far, after each one (a tool draws a
    ///   progress bar from it; keep it cheap).
    public func verify(progress: ((Int) -> Void)? = nil) throws -> VerificationReport {
        try mappingErrors { try verifyUnmapped(progress: progress) }
    }

    private func verifyUnmapped(progress: ((Int) -> Void)?) throws -> VerificationReport {
        var checked = 0
        var report = VerificationReport()
        report.metaPageProblem = try store.backend.integrityProblem()
        // Access tokens per bucket prefix: a lone token belongs under the prefix, others under their entry keys (§4.3).
        var bucketSizes: [[UInt8]: Int] = [:]
        if store.mayHoldLoneTokens {
            var keys = 0
            try transaction.forEach(in: DatabaseName.accessTokens, prefix: []) { key, _ in
                bucketSizes[Array(key.prefix(RecordStore.bucketPrefixCount)), default: 0] += 1
                keys += 1
                if keys % 512 == 0 { releaseScannedPages() }
                return true
            }
        }
        func check<S: StorableEntity>(_ type: S.Type) throws {
            var count = 0
            var corrupt: [CorruptRecord] = []
            var misplaced: [CorruptRecord] = []
            try scan(S.self, prefix: [], corrupt: &corrupt) { stored in
                count += 1
                checked += 1
                progress?(checked)
                // A whole-store walk: keep the pages read from piling up in this process's memory.
                if checked % 512 == 0 { releaseScannedPages() }
                let derived = S.storageKey(for: stored.entity.key, index: store.keyring.index)
                let location = stored.location.key
                var reason: String? = derived == location ? nil : "stored under a key its fields do not derive"
                if S.kind == .accessToken, store.mayHoldLoneTokens {
                    let prefix = Array(derived.prefix(RecordStore.bucketPrefixCount))
                    let lone = bucketSizes[prefix] == 1
                    if location == prefix {
                        reason = lone ? nil : "stored under its bucket prefix beside other tokens"
                    } else if reason == nil, lone, store.placesLoneTokensAtBucketPrefix {
                        report.loneTokensUnderEntryKey += 1
                    }
                }
                if let reason { misplaced.append(CorruptRecord(kind: S.kind, fingerprint: stored.fingerprint, reason: reason)) }
            }
            report.verified[S.kind] = count
            report.corrupt += corrupt
            report.misplaced += misplaced
        }
        try check(Account.self)
        try check(AccessToken.self)
        try check(RefreshToken.self)
        try check(IDToken.self)
        try check(AppMetadata.self)
        return report
    }
}

extension TokenStore {
    /// See ``CacheReader/verify(progress:)``.
    public func verify(progress: ((Int) -> Void)? = nil) throws -> VerificationReport { try read { try $0.verify(progress: progress) } }
}
