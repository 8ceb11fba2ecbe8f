import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool backup -o DIR`: a consistent, compacted copy of the store while it is in use; the copy is a store.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the store, consistent and compacted, into a new directory while it is in use.",
        discussion: """
            The copy is one snapshot: every record of one committed write, none of a later one, even while other \
            processes write. It is a store of its own that the same key opens (its files mode 0600, its directory \
            0700). To restore, stop every program using the store and move the copy's data.mdb over the store's, or \
            point --store at the copy.

            Exit codes: 0 copied and read back, 64 the destination is a file, not empty, already a store or the \
            store itself, 65 the store is damaged, 66 no store or key, 74 disk full or I/O error (nothing is left \
            behind), 77 wrong key or insecure permissions, 78 unsupported environment.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("A new or empty directory for the copy.", valueName: "dir"))
    var output: String

    func validate() throws { try Arguments.requireNonEmpty(output, "--output") }

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        // Copying reads every B-tree page: damage that crashes LMDB becomes exit 65, as for verify.
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            let bar = SharedProgressBar(label: "copying", unit: "bytes", delay: 1.0)
            let report: BackupReport
            do {
                report = try cache.backup(to: output) { written, total in bar?.update(done: written, total: total) }
            } catch let error as TokenCacheError where [.storeAlreadyExists, .invalidArgument].contains(error.code) {
                bar?.finish()
                Output.error(error.description)
                throw ExitCode(64)  // the destination given is not one a backup can go into
            }
            bar?.finish()
            let records = report.recordCounts.values.reduce(0, +)
            if json {
                print(
                    JSONValue.object([
                        "directory": .string(report.directory),
                        "bytes": .integer(Int64(report.bytesWritten)),
                        "records": .counts(report.recordCounts),
                        "seconds": .seconds(report.duration),
                    ]).prettyPrinted()
                )
            } else {
                print(Terminal.sanitize(
                    "Backed up \(ProgressBar.grouped(records)) record\(records == 1 ? "" : "s") (\(Info.bytes(report.bytesWritten))) "
                        + "to \(report.directory) in \(String(format: "%.1f", report.duration)) s; the same key opens it."
                ))
            }
        }
    }
}
