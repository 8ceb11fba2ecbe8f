import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool salvage`: copies what can still be read from a damaged store into a new one.
struct Salvage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy every record that can still be read from a damaged store into a new store.",
        discussion: """
            For a store that opens but has damaged B-tree pages, when there is no backup. Each database is read in \
            65,536 key ranges, each on its own, so a damaged page loses only the records of the ranges that pass \
            through it; each record is authenticated before it is copied, and damaged ones are left. The new store \
            gets the old header (the same key opens it) and is verified at the end. LMDB crashes on some damaged \
            pages: salvage then starts again by itself after the range that crashed it. Stopped any other way \
            (Ctrl-C, kill, the OOM killer), it skips nothing: run it again with the same -o and it goes on from its \
            last commit. Nothing is written to the damaged store.

            The output is a new directory, or an empty one closed to other users, outside the store; it is checked \
            before anything is copied, and one salvage at a time writes it.

            Then stop the programs that use the store, move it aside (`cachetool quarantine --force`, or mv) and move \
            the new store into its place.

            JSON keys: directory, salvaged {kind: count}, damaged_records, unreadable_ranges, resumed.

            Exit codes: 0 copied (the new store verifies), 64 usage, or the output is a file, not empty, the store or \
            inside it, 65 nothing can be read (the header holding the keys is damaged), 66 store or key not found, 74 \
            disk full or I/O error (run it again with the same -o to continue), 75 another salvage is writing the \
            output (its pid is named), 77 wrong key or permissions (of the output too). Stopped by a signal, it ends \
            by that signal.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("The new store's directory (new or empty, or an unfinished salvage's).", valueName: "dir"))
    var output: String

    func validate() throws { try Arguments.requireNonEmpty(output, "--output") }

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        // Started again after a crash only while the salvage moves on (its progress file changes); a crash is
        // recorded in the progress file, so that the salvage started again skips the range it happened in.
        let progressFile = output + "/salvage.progress"
        try CrashContainment.delegate(
            storeDirectory: options.configuration(readOnly: true).directory,
            resumption: CrashContainment.Resumption(
                crashRetries: 10_000, progress: { FileManager.default.contents(atPath: progressFile).map { Array($0) } },
                recordCrash: { try Failure.reporting { try TokenStore.recordSalvageCrash(in: output) } },
                howToContinue: "nothing was skipped; run it again with the same -o to continue"
            )
        )
        try Failure.reporting {
            let configuration = options.configuration(readOnly: true)
            let records = (try? TokenStore.open(configuration).info().recordCounts.values.reduce(0, +)) ?? 0
            let bar = ProgressBar(label: "salvaging", unit: "records", delay: 1.0)
            let report: SalvageReport
            do {
                report = try TokenStore.salvage(configuration, into: output) { bar?.update(done: $0, total: records) }
            } catch let error as TokenCacheError where [.storeAlreadyExists, .invalidArgument].contains(error.code) {
                bar?.finish()
                Output.error(error.description)
                throw ExitCode(64)  // the directory given is not one a salvage can go into
            }
            bar?.finish()
            var copy = configuration
            copy.directory = output
            copy.readOnly = false
            let verified = try TokenStore.open(copy).verify()
            if json {
                print(JSONValue.object([
                    "directory": .string(report.directory), "salvaged": .counts(report.salvaged),
                    "damaged_records": .integer(Int64(report.damagedRecords)), "unreadable_ranges": .integer(Int64(report.unreadableRanges)),
                    "resumed": .bool(report.resumed),
                ]).prettyPrinted())
            } else {
                let total = report.salvaged.values.reduce(0, +)
                print(Terminal.sanitize(
                    "Salvaged \(InspectTable.plural(total, "record")) into \(report.directory)"
                        + (report.damagedRecords > 0 ? "; left \(InspectTable.plural(report.damagedRecords, "damaged record"))" : "")
                        + (report.unreadableRanges > 0 ? "; \(InspectTable.plural(report.unreadableRanges, "key range")) could not be read" : "")
                        + ". The new store verifies: \(verified.isClean ? "clean" : "problems found")."
                ))
            }
            if !verified.isClean {
                Output.error("corruptStore: the salvaged store at \(output) does not verify clean (`cachetool verify --store \(output)`)")
                throw ExitCode(65)
            }
        }
    }
}
