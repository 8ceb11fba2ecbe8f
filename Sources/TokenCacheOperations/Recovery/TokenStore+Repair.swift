import Foundation
public import TokenCache
internal import TokenCacheStorage

/// What ``TokenStore/repair(backupTo:progress:)`` changed.
public struct RepairReport: Sendable {
    /// Where the copy of the store taken before the first change is; nil when nothing needed repair (or the store is
    /// in memory).
    public var backupDirectory: String?
    /// Every record removed or moved, by fingerprint (of where it was), in the order made.
    public var changes: [RepairChange] = []
    /// Lone access tokens moved under their bucket prefix (valid before, faster to find after).
    public var loneTokensPlaced = 0
    /// Records that changed between the check and the repair (another process wrote them): left as they now are.
    public var skipped = 0
    /// LMDB meta-page damage, which no record-level repair fixes (see ``VerificationReport/metaPageProblem``).
    public var metaPageProblem: String?
}

/// One record a repair removed or moved.
public struct RepairChange: Sendable, Hashable, CustomStringConvertible {
    public enum Action: String, Sendable {
        /// It did not authenticate or decode, or it sat where another record belongs.
        case removed
        /// It decrypted and was re-sealed under the key its fields derive.
        case moved
    }

    /// The record's kind (`AccessToken`, …), or its `meta` key (`access-token-cap`, `foreign-sections`).
    public var record: String
    /// Its fingerprint where it was.
    public var fingerprint: String
    public var action: Action
    /// What was wrong, without any of its content.
    public var reason: String

    public var description: String { "\(action.rawValue) \(record) record \(fingerprint): \(reason)" }
}

extension TokenStore {
    /// Problems fixed per write transaction.
    static let repairBatch = 256

    /// Repairs what ``verify(progress:)`` finds at the level of records: removes those that do not authenticate or
    /// decode (and a damaged access-token cap or kept-sections record), moves a record that decrypts but sits under
    /// the wrong key to the key its fields derive (removing it instead when a record is already stored there), puts
    /// the tokens of the buckets it touched where FORMAT.md §4.3 says, and places lone tokens under their bucket
    /// prefix. Nothing is changed when verify finds nothing to repair.
    ///
    /// Before the first change, a consistent copy of the whole store is written to `backupDirectory` (as
    /// ``backup(to:progress:)`` does): a repair only ever removes what cannot be read or is misplaced, but an
    /// operator can always go back. Fixes run in transactions of a few hundred records, and each record is changed
    /// only if it is still byte for byte what the check found. A repair can be stopped at any point and run again.
    ///
    /// LMDB meta-page damage is reported (``RepairReport/metaPageProblem``), not repaired: see the README's
    /// "Recovering a damaged store".
    /// - Parameters:
    ///   - backupDirectory: Where the copy goes (a new or empty directory); nil: `DIRECTORY.before-repair-TIMESTAMP`
    ///     beside the store. Ignored for a store in memory (which has no copy).
    ///   - progress: Called with the number of records checked so far.
    /// - Throws: ``TokenCacheError``: the errors of ``backup(to:progress:)`` (nothing is changed then) and of
    ///   ``write(_:)``.
    public func repair(backupTo backupDirectory: String?, progress: ((Int) -> Void)? = nil) throws -> RepairReport {
        try store.checkWritable()
        var report = RepairReport()
        var findings: [RecordFinding] = []
        try read { reader in
            report.metaPageProblem = try reader.mappingErrors { try store.backend.integrityProblem() }
            try reader.mappingErrors { try reader.forEachFinding(checked: progress, verified: { _, _ in }) { findings.append($0) } }
        }
        guard !findings.isEmpty else { return report }
        if !configuration.isInMemory {
            let backupDirectory = backupDirectory ?? Self.timestampedSibling(of: configuration.directory, label: "before-repair", at: Date())
            _ = try backup(to: backupDirectory)
            report.backupDirectory = backupDirectory
        }
        let fixes = findings.filter { $0.problem != .loneUnderEntryKey }
        for start in stride(from: 0, to: fixes.count, by: Self.repairBatch) {
            let batch = fixes[start..<min(start + Self.repairBatch, fixes.count)]
            let (changes, skipped) = try removing { writer in try writer.mappingErrors { try writer.repair(batch) } }
            report.changes += changes
            report.skipped += skipped
        }
        let lone = findings.count { $0.problem == .loneUnderEntryKey }
        if lone > 0 {
            try store.placeAllLoneTokens()
            report.loneTokensPlaced = lone
        }
        return report
    }
}

extension RecordStore {
    /// Places every lone access token under its bucket prefix, in bounded transactions, as the upgrade from version 1
    /// does (without its cursor: a repair that is stopped is simply run again).
    func placeAllLoneTokens() throws {
        guard placesLoneTokensAtBucketPrefix else { return }
        var start: [UInt8]? = []
        while let from = start {
            start = try backend.write(freeingSpace: true) { txn in try placeLoneTokens(from: from, in: txn) }
        }
    }
}

extension CacheWriter {
    /// Applies the fixes `findings` call for, each only if its record is still the value the check found. Returns the
    /// changes made and how many findings were skipped because the record changed meanwhile.
    func repair(_ findings: ArraySlice<RecordFinding>) throws -> (changes: [RepairChange], skipped: Int) {
        var changes: [RepairChange] = []
        var skipped = 0
        var touchedBuckets: Set<[UInt8]> = []
        for finding in findings {
            let current = try writeTransaction.withValue(in: finding.database, forKey: finding.key) { $0.withUnsafeBytes { Array($0) } }
            guard current == finding.value else {
                skipped += 1
                continue
            }
            var action = RepairChange.Action.removed
            if case .misplaced(let target) = finding.problem,
                try writeTransaction.withValue(in: finding.database, forKey: target, { _ in true }) == nil,
                try store.move(finding.database, from: finding.key, to: target, in: writeTransaction)
            {
                action = .moved
            } else {
                _ = try writeTransaction.delete(in: finding.database, key: finding.key)
            }
            if finding.kind == .accessToken {
                touchedBuckets.insert(Array(finding.key.prefix(RecordStore.bucketPrefixCount)))
                if case .misplaced(let target) = finding.problem { touchedBuckets.insert(Array(target.prefix(RecordStore.bucketPrefixCount))) }
            }
            changes.append(RepairChange(record: finding.recordName, fingerprint: finding.fingerprint, action: action, reason: finding.reason))
        }
        for prefix in touchedBuckets.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try store.placeTokens(ofBucket: prefix, in: writeTransaction)
        }
        return (changes, skipped)
    }
}
