import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool verify`: decrypt everything and check the format's invariants; with `--repair`, fix what it finds.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decrypt every record and check that each is stored where its fields say (exit 65 on any problem).",
        discussion: """
            Problems are listed by record fingerprint, never by content: records that do not authenticate or \
            decode (corrupt), records that decrypt but sit under a key their fields do not derive (misplaced), a \
            damaged access-token cap or kept-MSAL-sections record, and damage to LMDB's meta pages.

            --repair fixes what is found at the level of records, after writing a consistent copy of the whole \
            store to --backup-dir (default: a new directory beside the store, STORE.before-repair-TIMESTAMP; the \
            same key opens it, so restoring is moving it back). Corrupt records are removed; a misplaced record is \
            re-sealed under the key its fields derive, or removed when a record is already stored there; lone \
            access tokens are placed under their bucket prefix. Every change is listed by fingerprint. A record \
            another process rewrites meanwhile is left as it is. Nothing is changed, and no copy made, when \
            nothing needs repair. Meta-page damage is not repaired: see "Recovering a damaged store" in the README.

            JSON keys: verified {kind: count}, lone_tokens_under_entry_key, meta_page_problem, data_keys [{id, active, \
            cipher, records}], data_key_rotation_pending, problems [{kind, fingerprint, problem, reason}]; with --repair also repair {backup, changes [{record, fingerprint, action, \
            reason}], lone_tokens_placed, skipped}.

            Exit codes: 0 clean (after --repair: repaired and clean), 64 usage, 65 problems found (after \
            --repair: problems left), 66 store or key not found, 74 storage full or I/O error (the backup or a \
            repair write failed; what committed stays), 75 conflict, 77 wrong key.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Fix what is found, after backing the store up (see below).")
    var repair = false

    @Option(name: .customLong("backup-dir"), help: ArgumentHelp("Where --repair writes its backup first.", valueName: "dir"))
    var backupDirectory: String?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if backupDirectory != nil, !repair { throw ValidationError("--backup-dir goes with --repair") }
    }

    func run() throws {
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        var clean = true
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: !repair))
            let records = try cache.info().recordCounts.values.reduce(0, +)
            var repaired: RepairReport? = nil
            if let backupDirectory {
                do { try cache.checkBackupDestinationOutsideStore(backupDirectory) } catch let error as TokenCacheError {
                    Output.error(error.description)
                    throw ExitCode(64)  // checked before anything is read: a destination no backup can go into
                }
            }
            if repair {
                let bar = ProgressBar(label: "checking", unit: "records", delay: 1.0)
                repaired = try cache.repair(backupTo: backupDirectory) { bar?.update(done: $0, total: records) }
                bar?.finish()
            }
            let bar = ProgressBar(label: "verifying", unit: "records", delay: 1.0)
            let report = try cache.verify { bar?.update(done: $0, total: records) }
            bar?.finish()
            clean = report.isClean
            let problems = report.corrupt.map { ($0.kind.rawValue, $0.fingerprint, "corrupt", $0.reason) }
                + report.misplaced.map { ($0.kind.rawValue, $0.fingerprint, "misplaced", $0.reason) }
                + report.damagedMetaRecords.map { ($0.name, $0.fingerprint, "corrupt", $0.reason) }
            if json {
                var object: [String: JSONValue] = [
                    "verified": .counts(report.verified),
                    "lone_tokens_under_entry_key": .integer(Int64(report.loneTokensUnderEntryKey)),
                    "meta_page_problem": report.metaPageProblem.map { .string($0) } ?? .null,
                    "data_keys": .array(report.dataKeyIDs.map { id in
                        .object([
                            "id": .integer(Int64(id)), "active": .bool(id == report.activeDataKeyID),
                            "cipher": .string(report.cipherByDataKey[id]?.rawValue ?? ""), "records": .integer(Int64(report.recordsByDataKey[id] ?? 0)),
                        ])
                    }),
                    "data_key_rotation_pending": .bool(report.dataKeyRotationPending),
                    "problems": .array(problems.map { kind, fingerprint, problem, reason in
                        .object(["kind": .string(kind), "fingerprint": .string(fingerprint), "problem": .string(problem), "reason": .string(reason)])
                    }),
                ]
                if let repaired { object["repair"] = Self.json(repaired) }
                print(JSONValue.object(object).prettyPrinted())
                return
            }
            if let repaired { print(Self.describe(repaired)) }
            let total = report.verified.values.reduce(0, +)
            let problemCount = problems.count + (report.metaPageProblem == nil ? 0 : 1)
            print("\(total) record\(total == 1 ? "" : "s") verified, \(problemCount) problem\(problemCount == 1 ? "" : "s").")
            print(Self.describeDataKeys(report))
            if let problem = report.metaPageProblem { print(problem) }
            if report.loneTokensUnderEntryKey > 0 {
                print("\(report.loneTokensUnderEntryKey) lone access token(s) under their entry key, not their bucket prefix: valid, slower to look up (an upgrade still placing tokens; a writable open resumes it).")
            }
            for (kind, fingerprint, problem, reason) in problems {
                print(Terminal.sanitize("\(problem) \(kind) record \(fingerprint): \(reason)"))
            }
            if !clean, !repair, problems.count > 0 {
                print("Run `cachetool verify --repair` to remove or move these records (after a backup).")
            }
        }
        if !clean { throw ExitCode(65) }
    }

    /// `data keys: 1 (blind index) 0 records, 2 (active, aes-256-gcm) 17 records`, and a rotation left unfinished.
    static func describeDataKeys(_ report: VerificationReport) -> String {
        let keys = report.dataKeyIDs.map { id in
            let cipher = report.cipherByDataKey[id].map { ", \($0)" } ?? ""
            let role = id == report.activeDataKeyID ? " (active\(cipher))" : id == report.dataKeyIDs.first ? " (blind index)" : ""
            return "\(id)\(role) \(InspectTable.plural(report.recordsByDataKey[id] ?? 0, "record"))"
        }
        let unknown = report.recordsByDataKey.filter { !report.dataKeyIDs.contains($0.key) }.values.reduce(0, +)
        var line = "data keys: " + keys.joined(separator: ", ")
        if unknown > 0 { line += "; \(InspectTable.plural(unknown, "record")) naming no key of the header" }
        if report.dataKeyRotationPending { line += "\na data-key rotation is unfinished: `cachetool rekey --rotate-data-key` (or any writable open) finishes it" }
        return line
    }

    static func json(_ report: RepairReport) -> JSONValue {
        .object([
            "backup": report.backupDirectory.map { .string($0) } ?? .null,
            "changes": .array(report.changes.map { change in
                .object(["record": .string(change.record), "fingerprint": .string(change.fingerprint),
                         "action": .string(change.action.rawValue), "reason": .string(change.reason)])
            }),
            "lone_tokens_placed": .integer(Int64(report.loneTokensPlaced)),
            "skipped": .integer(Int64(report.skipped)),
        ])
    }

    static func describe(_ report: RepairReport) -> String {
        guard let backup = report.backupDirectory else { return "Nothing to repair." }
        var lines = [Terminal.sanitize("Backed the store up to \(backup) first.")]
        for change in report.changes { lines.append(Terminal.sanitize(change.description)) }
        if report.loneTokensPlaced > 0 { lines.append("placed \(report.loneTokensPlaced) lone access token(s) under their bucket prefix") }
        if report.skipped > 0 { lines.append("left \(report.skipped) record(s) another process rewrote meanwhile") }
        let removed = report.changes.filter { $0.action == .removed }.count
        lines.append("Repaired: \(removed) removed, \(report.changes.count - removed) moved, \(report.loneTokensPlaced) placed.")
        return lines.joined(separator: "\n")
    }
}
