import ArgumentParser
import Foundation
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool import`: move an MSAL serialized cache (Azure CLI, MSAL Python, msal-extensions, .NET, Go, Node) into
/// the store.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an MSAL serialized token cache (JSON) into the store.",
        discussion: """
            Reads FILE, or standard input when it is '-' or absent. The whole file is checked before anything is \
            written: one invalid entry imports nothing (exit 65) unless --skip-invalid. Merging keeps, for each \
            identity, the record written later (cached_at, then expires_on); --replace makes the store exactly the \
            file, in one transaction. Unknown fields and sections are kept, encrypted, and written back by export.

            JSON keys (stable): entries, written {AccessToken, RefreshToken, IdToken, Account, AppMetadata}, \
            kept_existing {…}, access_tokens_superseded, removed_by_replace, kept_sections [names], rejected \
            [{section, fingerprint, offset, field, reason}].
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Replace everything the store holds with the file's records (one transaction).")
    var replace = false

    @Flag(name: .customLong("skip-invalid"), help: "Import the valid entries and list the invalid ones (by fingerprint).")
    var skipInvalid = false

    @Option(name: .customLong("batch-size"), help: ArgumentHelp("Entries per write transaction when merging.", valueName: "n"))
    var batchSize = 1_000

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The MSAL cache file, or '-' for standard input.", valueName: "file"))
    var file: String?

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() throws {
        try Failure.reporting {
            let source: MSALCacheSource
            if let file, file != "-" {
                source = .file(path: file)
            } else {
                if isatty(STDIN_FILENO) == 1 {
                    throw ValidationError("standard input is a terminal: give the cache file, or pipe it in (cachetool import - < cache.json)")
                }
                source = .bytes(Array(FileHandle.standardInput.readDataToEndOfFile()))
            }
            let cache = try TokenStore.open(options.configuration(readOnly: false))
            let bar = json ? nil : ProgressBar(label: "importing", unit: "entries")
            let report = try cache.importMSAL(
                from: source, options: MSALImportOptions(mode: replace ? .replace : .merge, skipInvalid: skipInvalid, batchSize: batchSize)
            ) { progress in bar?.update(done: progress.entriesDone, total: progress.entriesTotal) }
            bar?.finish()
            if json {
                print(Self.json(report).prettyPrinted())
            } else {
                print(Self.describe(report, replaced: replace))
            }
            if !report.rejected.isEmpty {
                Output.warning("\(report.rejected.count) invalid entr\(report.rejected.count == 1 ? "y was" : "ies were") not imported")
            }
        }
    }

    static func counts(_ counts: [EntityKind: Int]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: EntityKind.allCases.map { ($0.rawValue, JSONValue.integer(Int64(counts[$0] ?? 0))) }))
    }

    static func json(_ report: MSALImportReport) -> JSONValue {
        .object([
            "entries": .integer(Int64(report.entries)),
            "written": counts(report.written),
            "kept_existing": counts(report.keptExisting),
            "access_tokens_superseded": .integer(Int64(report.accessTokensSuperseded)),
            "removed_by_replace": .integer(Int64(report.removedByReplace)),
            "kept_sections": .array(report.keptSections.map { .string($0) }),
            "rejected": .array(report.rejected.map { entry in
                .object([
                    "section": .string(entry.section), "fingerprint": .string(entry.fingerprint), "offset": .integer(Int64(entry.offset)),
                    "field": entry.field.map { .string($0) } ?? .null, "reason": .string(entry.reason),
                ])
            }),
        ])
    }

    static func describe(_ report: MSALImportReport, replaced: Bool) -> String {
        func list(_ counts: [EntityKind: Int]) -> String {
            let parts = EntityKind.allCases.compactMap { kind in counts[kind].flatMap { $0 > 0 ? "\($0) \(kind)" : nil } }
            return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
        }
        var lines = ["Imported \(report.writtenCount) of \(report.entries) entries\(list(report.written))."]
        if replaced { lines.append("Replaced the store's previous \(report.removedByReplace) records.") }
        let kept = report.keptExisting.values.reduce(0, +)
        if kept > 0 { lines.append("Kept \(kept) stored records written as late or later\(list(report.keptExisting)).") }
        if report.accessTokensSuperseded > 0 {
            lines.append("Removed \(report.accessTokensSuperseded) stored access tokens superseded by newer imported ones.")
        }
        if !report.keptSections.isEmpty {
            lines.append("Kept \(report.keptSections.count) unknown section(s) for export: \(report.keptSections.joined(separator: ", ")).")
        }
        if !report.rejected.isEmpty {
            lines.append("Not imported (invalid):")
            for entry in report.rejected {
                lines.append("  \(entry.section) entry \(entry.fingerprint) at byte \(entry.offset): " + (entry.field.map { "field \($0): " } ?? "") + entry.reason)
            }
        }
        return lines.map(Terminal.sanitize).joined(separator: "\n")
    }
}
