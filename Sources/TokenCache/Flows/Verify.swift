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
    /// Damaged `meta` records (the access-token cap, the kept MSAL sections).
    public var damagedMetaRecords: [DamagedMetaRecord] = []
    /// The data keys in the header, ascending (the first roots the blind index), and the one new records are sealed
    /// under.
    public var dataKeyIDs: [UInt32] = []
    public var activeDataKeyID: UInt32 = 0
    /// The cipher each data key of the header seals with.
    public var cipherByDataKey: [UInt32: StoreCipher] = [:]
    /// How many records name each data key id: which keys are in use. After a finished rotation, only the active one.
    public var recordsByDataKey: [UInt32: Int] = [:]
    /// A data-key rotation was started and not finished (`rotateDataKey(to:progress:)`, in TokenCacheOperations,
    /// continues it).
    public var dataKeyRotationPending = false

    /// No corrupt or misplaced record and no meta-page problem (lone tokens under their entry key do not count).
    public var isClean: Bool { corrupt.isEmpty && misplaced.isEmpty && damagedMetaRecords.isEmpty && metaPageProblem == nil }
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
        var report = VerificationReport()
        report.metaPageProblem = try store.backend.integrityProblem()
        report.dataKeyIDs = store.keyring.keyIDs
        report.activeDataKeyID = store.keyring.activeKeyID
        report.cipherByDataKey = Dictionary(uniqueKeysWithValues: store.keyring.header.wrappedKeys.map { ($0.keyID, StoreCipher($0.cipher)) })
        report.dataKeyRotationPending = try store.isRotationPending(in: transaction)
        try forEachFinding(checked: progress, verified: { report.verified[$0] = $1 }, sealedUnder: { report.recordsByDataKey[$0, default: 0] += 1 }) { finding in
            guard let kind = finding.kind else {
                report.damagedMetaRecords.append(DamagedMetaRecord(name: finding.recordName, fingerprint: finding.fingerprint, reason: finding.reason))
                return
            }
            let record = CorruptRecord(kind: kind, fingerprint: finding.fingerprint, reason: finding.reason)
            switch finding.problem {
            case .corrupt: report.corrupt.append(record)
            case .misplaced: report.misplaced.append(record)
            case .loneUnderEntryKey: report.loneTokensUnderEntryKey += 1
            }
        }
        return report
    }
}

/// A damaged `meta` record: the access-token cap or the kept MSAL sections (FORMAT.md §5.5, §5.6).
public struct DamagedMetaRecord: Sendable, Hashable {
    /// The record's `meta` key: `access-token-cap` or `foreign-sections`.
    public var name: String
    public var fingerprint: String
    /// Why, without any of its content.
    public var reason: String
}
