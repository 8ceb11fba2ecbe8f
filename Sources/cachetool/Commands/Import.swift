import ArgumentParser
import Foundation
import TokenCache

#if canImport(Glibc)
import Glibc
import TokenCacheMSAL
#endif

/// `cachetool import`: move an MSAL serialized cache (Azure CLI, MSAL Python, msal-extensions, .NET, Go, Node) into
/// the store.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an MSAL serialized token cache (JSON) into the store.",
        discussion: """
            Reads FILE, or standard input when it is '-' or absent. The whole file is checked before anything is \
            written: one invalid entry imports nothing (exit 65) unless --skip-invalid. Merging keeps, for each \
            identity, the record written later (cached_at, then expires_on), committing --batch-size entries per \
            transaction (at most 10000, so that no transaction keeps the store's other writers waiting): an import \
            that is stopped or killed keeps what it committed, and running it again finishes it. --replace makes the \
            store exactly the file, in one transaction, for a file of at most 10000 entries: stopped or killed, the \
            store is the old one or the new one. A file of more than 1000000 entries is refused. Unknown fields and \
            sections are kept, encrypted, and written back by export.

            --discover lists, without importing, the plaintext caches left for this user by Azure CLI \
            (~/.azure/msal_token_cache.json, or in $AZURE_CONFIG_DIR) and by the Azure Identity libraries \
            (~/.IdentityService/msal.cache*, *.cae, *.nocae), with their counts; --from imports the one found.

            --shred-source: once the import has committed and a read-back found every entry of the file in the \
            store (with the same secret, a record of the same identity written later, or another entry of the file \
            that the store holds for the identity), the file is overwritten \
            with zeros and removed. Never after rejected entries, never for standard input; if the file is kept, \
            the command says why and exits 1. From before the import reads the file until it is removed, the \
            command holds the lock Azure CLI and msal-extensions take to write it (an exclusive flock on \
            FILE.lockfile), waiting for it at most TOKEN_CACHE_LOCK_TIMEOUT seconds (30; then it exits 75 naming \
            the holder, nothing imported); a file whose identity or content changed since the command started is \
            kept. Overwriting cannot be guaranteed on copy-on-write or journaling file \
            systems and SSDs, and copies may exist: if the file may have been copied, revoke its tokens.

            JSON keys (stable): entries, written {AccessToken, RefreshToken, IdToken, Account, AppMetadata}, \
            kept_existing {…}, merged_in_file {…}, access_tokens_superseded, removed_by_replace, kept_sections \
            [names], rejected [{section, fingerprint, offset, field, reason}], source (path or null), verified (null \
            or {identical, superseded, merged, unverified [{section, fingerprint, offset, reason}]}), shredded, \
            kept_because (null or why). \
            With --discover: caches [{tool, path, size, mode, modified, entries {…}, accounts, tokens, \
            invalid_entries, problem}], searched [paths].
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Replace everything the store holds with the file's records (one transaction).")
    var replace = false

    @Flag(name: .customLong("skip-invalid"), help: "Import the valid entries and list the invalid ones (by fingerprint).")
    var skipInvalid = false

    @Option(name: .customLong("batch-size"), help: ArgumentHelp("Entries per write transaction when merging (at most 10000).", valueName: "n"))
    var batchSize = 1_000

    @Flag(help: "List the plaintext MSAL caches found for this user, without importing.")
    var discover = false

    @Option(help: ArgumentHelp("Import the cache this tool left (see --discover).", valueName: "tool"))
    var from: PlaintextCaches.Tool?

    @Flag(
        name: .customLong("shred-source"),
        help: "After a complete, verified import, overwrite the file with zeros and remove it.")
    var shredSource = false

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The MSAL cache file, or '-' for standard input.", valueName: "file"))
    var file: String?

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
        try Arguments.requireNonEmpty(file, "the FILE argument (name an MSAL cache file, or '-' for standard input)")
        if batchSize > MSALImportOptions.maximumEntriesPerTransaction {
            throw ValidationError(
                "--batch-size must be at most \(MSALImportOptions.maximumEntriesPerTransaction): a longer transaction keeps the store's other "
                    + "writers waiting")
        }
        if discover {
            let others = [(file != nil, "a FILE"), (from != nil, "--from"), (replace, "--replace"), (skipInvalid, "--skip-invalid"),
                          (shredSource, "--shred-source")].filter(\.0).map(\.1)
            if !others.isEmpty { throw ValidationError("--discover imports nothing: it takes no \(others.joined(separator: ", "))") }
        }
        if from != nil, file != nil { throw ValidationError("give either a FILE or --from, not both") }
        if shredSource, from == nil, file == nil || file == "-" {
            throw ValidationError("--shred-source needs a file: standard input cannot be shredded")
        }
    }

    func run() throws {
        if discover { return try Self.discover(json: json) }
        var keptBecause: String? = nil
        try Failure.reporting {
            let source: MSALCacheSource
            var path = file == "-" ? nil : file
            if let from { path = try Self.resolve(from) }
            // Taken before anything reads the file: the shredding refuses a file that changed since.
            let identity: SourceShredding.Identity?
            let content: SourceShredding.Content?
            do {
                identity = try path.flatMap { shredSource ? try SourceShredding.identity(of: $0) : nil }
                content = try path.flatMap { shredSource ? try SourceShredding.content(of: $0) : nil }
            } catch {
                throw ValidationError("--shred-source: \(Terminal.sanitize(path ?? "")) cannot be shredded: \(error); nothing was imported")
            }
            // Held from before the import reads the file until it is removed: Azure CLI waits meanwhile.
            let lock: MSALCacheFileLock?
            do {
                lock = try path.flatMap { shredSource ? try MSALCacheFileLock.acquire(for: $0, timeout: lockTimeout) : nil }
            } catch {
                Output.error("kept \(Terminal.sanitize(path ?? "")), not shredded: \(error)")
                throw ExitCode(75)
            }
            defer { lock?.release() }
            if let path {
                source = .file(path: path)
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
            var verification: MSALImportVerification? = nil
            var shredded = false
            if let path, let identity, let content {
                if !report.rejected.isEmpty {
                    keptBecause = "\(report.rejected.count) of its entries were not imported"
                } else {
                    // The import has committed: a read-back that fails keeps the file, and the report still prints.
                    do { verification = try cache.verifyMSALImport(from: .file(path: path)) } catch let error as TokenCacheError {
                        keptBecause = "reading it back failed: \(error.message)"
                    }
                    if let readBack = verification, !readBack.isComplete {
                        keptBecause = "\(readBack.unverified.count) of its entries are not in the store as they are or newer"
                    } else if verification != nil {
                        do throws(SourceShredding.Refusal) {
                            try SourceShredding.shred(path, expected: identity, content: content)
                            shredded = true
                        } catch {
                            keptBecause = error.description
                        }
                    }
                }
            }
            if json {
                var object = Self.json(report)
                if case .object(var members) = object {
                    members["source"] = path.map { .string($0) } ?? .null
                    members["verified"] = verification.map(Self.json) ?? .null
                    members["shredded"] = .bool(shredded)
                    members["kept_because"] = keptBecause.map { .string($0) } ?? .null
                    object = .object(members)
                }
                print(object.prettyPrinted())
            } else {
                print(Self.describe(report, replaced: replace))
                if let verification { print(Self.describe(verification)) }
            }
            if !report.rejected.isEmpty {
                Output.warning("\(report.rejected.count) invalid entr\(report.rejected.count == 1 ? "y was" : "ies were") not imported")
            }
            if let path, shredSource {
                if shredded {
                    Output.note("overwrote \(path) with zeros and removed it")
                    Output.warning(SourceShredding.caveat)
                } else if let keptBecause {
                    Output.error("kept \(path), not shredded: \(keptBecause)")
                }
            }
        }
        if keptBecause != nil { throw ExitCode(1) }
    }

    /// How long --shred-source waits for msal-extensions' lock on the file: the store's lock wait.
    var lockTimeout: Duration { options.configuration(readOnly: false).lockTimeout }

    /// The one cache `tool` left, for --from.
    static func resolve(_ tool: PlaintextCaches.Tool) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let found = PlaintextCaches.find(environment, tool: tool)
        // An empty file holds no tokens: msal-extensions touches one as a change signal when tokens are in a keyring.
        let candidates = found.filter { found in
            var status = stat()
            return stat(found.path, &status) == 0 && status.st_size > 0
        }
        guard !candidates.isEmpty else {
            Output.error(
                "no \(tool.displayName) cache with content was found (looked for "
                    + PlaintextCaches.searched(environment, tool: tool).joined(separator: ", ") + ")")
            throw ExitCode(66)
        }
        guard candidates.count == 1 else {
            throw ValidationError(
                "\(candidates.count) \(tool.displayName) caches were found: "
                    + candidates.map { Terminal.sanitize($0.path) }.joined(separator: ", ")
                    + "; give the one to import as FILE (cachetool import --discover lists them)")
        }
        Output.note("importing \(candidates[0].path) (\(tool.displayName))")
        return candidates[0].path
    }

    static func json(_ verification: MSALImportVerification) -> JSONValue {
        .object([
            "identical": .integer(Int64(verification.identical)),
            "superseded": .integer(Int64(verification.superseded)),
            "merged": .integer(Int64(verification.merged)),
            "unverified": .array(verification.unverified.map { entry in
                .object([
                    "section": .string(entry.section), "fingerprint": .string(entry.fingerprint),
                    "offset": .integer(Int64(entry.offset)), "reason": .string(entry.reason),
                ])
            }),
        ])
    }

    static func describe(_ verification: MSALImportVerification) -> String {
        var lines = [
            "Read back \(verification.entries) entries: \(verification.identical) stored as in the file, "
                + "\(verification.superseded) superseded by records written later"
                + (verification.merged > 0 ? ", \(verification.merged) merged into another entry of the file with the same identity." : ".")
        ]
        if !verification.unverified.isEmpty {
            lines.append("Not found in the store as they are or newer:")
            for entry in verification.unverified {
                lines.append("  \(entry.section) entry \(entry.fingerprint) at byte \(entry.offset): \(entry.reason)")
            }
        }
        return lines.map(Terminal.sanitize).joined(separator: "\n")
    }

    static func counts(_ counts: [EntityKind: Int]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: EntityKind.allCases.map { ($0.rawValue, JSONValue.integer(Int64(counts[$0] ?? 0))) }))
    }

    static func json(_ report: MSALImportReport) -> JSONValue {
        .object([
            "entries": .integer(Int64(report.entries)),
            "written": counts(report.written),
            "kept_existing": counts(report.keptExisting),
            "merged_in_file": counts(report.mergedInFile),
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
        if kept > 0 { lines.append("Kept \(kept) stored records the file's were not shown to be newer than\(list(report.keptExisting)).") }
        let merged = report.mergedInFile.values.reduce(0, +)
        if merged > 0 {
            lines.append(
                "Merged \(merged) entries into the records of earlier entries of the file with the same identity\(list(report.mergedInFile)): "
                    + "the store keeps one record per identity (one refresh token per account and client or family), the later "
                    + "written, on a tie the file's first.")
        }
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
