/// What ``CacheReader/verify()`` found.
public struct VerificationReport: Sendable {
    /// Records that authenticated and decoded, by kind.
    public var verified: [EntityKind: Int] = [:]
    /// Records that failed authentication or decoding.
    public var corrupt: [CorruptRecord] = []
    /// Records that decrypt but sit under a key their own fields do not derive (FORMAT.md §8, invariant 3): a
    /// writer bug, never produced by this library.
    public var misplaced: [CorruptRecord] = []

    public var isClean: Bool { corrupt.isEmpty && misplaced.isEmpty }
}

extension CacheReader {
    /// Decrypts every record of the store and checks that each sits under the storage key its fields derive.
    /// Reads everything: a maintenance operation, not for hot paths.
    public func verify() throws -> VerificationReport {
        var report = VerificationReport()
        func check<S: StorableEntity>(_ type: S.Type) throws {
            var count = 0
            var corrupt: [CorruptRecord] = []
            var misplaced: [CorruptRecord] = []
            try scan(S.self, prefix: [], corrupt: &corrupt) { stored in
                count += 1
                if S.storageKey(for: stored.entity.key, index: store.keyring.index) != stored.location.key {
                    misplaced.append(
                        CorruptRecord(kind: S.kind, fingerprint: stored.fingerprint, reason: "stored under a key its fields do not derive")
                    )
                }
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

extension TokenCache {
    /// See ``CacheReader/verify()``.
    public func verify() throws -> VerificationReport { try read { try $0.verify() } }
}
