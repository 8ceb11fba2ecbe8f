import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool compact`: rewrite the store compacted and swap it in, when no process has it open.
///
/// Not run in a contained child as `verify` and `backup` are: the child would outlive a parent that is killed, and
/// go on compacting behind its back. A crash of compaction itself leaves the store as it was (or compacted, once
/// swapped), so there is nothing a parent would have to report.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite the store compacted, giving the space of deleted records back to the disk.",
        discussion: """
            The store must not be open anywhere: compaction refuses (exit 75, naming the process to stop) while a \
            process has it open, and programs that open it meanwhile wait until it is done. The compacted file is \
            written beside the store, fsynced, and renamed over data.mdb: a crash at any moment leaves the old store \
            or the compacted one, with the same records (a leftover data.mdb.compacting is removed by the next \
            compact). No key is needed.

            Exit codes: 0 compacted, 65 the store is damaged, 66 no store, 74 disk full or I/O error (the store is \
            unchanged), 75 the store is open in another process, 77 insecure permissions, 78 unsupported environment.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try Failure.reporting {
            let bar = SharedProgressBar(label: "compacting", unit: "bytes", delay: 1.0)
            let report = try TokenStore.compact(options.configuration(readOnly: false)) { written, before in
                bar?.update(done: written, total: before)
            }
            bar?.finish()
            let records = report.recordCounts.values.reduce(0, +)
            if json {
                print(
                    JSONValue.object([
                        "directory": .string(report.directory),
                        "size_before": .integer(Int64(report.sizeBefore)),
                        "size_after": .integer(Int64(report.sizeAfter)),
                        "records": .counts(report.recordCounts),
                        "seconds": .seconds(report.duration),
                    ]).prettyPrinted()
                )
            } else {
                print(Terminal.sanitize(
                    "Compacted \(report.directory): \(Info.bytes(report.sizeBefore)) to \(Info.bytes(report.sizeAfter)), "
                        + "\(ProgressBar.grouped(records)) record\(records == 1 ? "" : "s"), in \(String(format: "%.1f", report.duration)) s."
                ))
            }
        }
    }
}
