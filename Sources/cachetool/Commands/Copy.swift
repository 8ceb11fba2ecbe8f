import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations
import TokenCachePostgreSQL

/// `cachetool copy --to DIR|URL`: every record of the store, sealed as it is, into another store of either kind: a
/// directory's records up to a shared store, a shared store's down to a directory (a backup the same key opens).
struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy every record, sealed, between a directory and a shared store (either way).",
        discussion: """
            The copy takes the store's header (its id and wrapped data keys), so records are copied as they are \
            stored, never decrypted, and the same key opens the copy: a directory copy of a shared store is a \
            backup of it. The destination (--to, a directory or a postgresql:// URL) is created when missing; one \
            that holds records is refused unless --replace is given, which removes them first. The copy is one \
            snapshot, written 256 records per transaction with the header last: a copy cut short leaves no \
            header, so nothing takes it for a store (copy again with --replace). Refresh leases are not copied. Every wait on a server is bounded by TOKEN_CACHE_STORE_TIMEOUT.

            Exit codes: 0 copied and read back through the key, 64 the destination holds records (without \
            --replace), is the store itself or a file, 65 the store is damaged, 66 no store or key, 69 server \
            unavailable, 74 disk full or I/O error, 77 wrong key or insecure permissions.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("to"), help: ArgumentHelp("The destination: a directory or a postgresql:// URL.", valueName: "dir|url"))
    var destination: String

    @Flag(help: "Remove the records the destination holds before copying.")
    var replace = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        try Arguments.requireNonEmpty(destination, "--to")
        try StoreLocation.check(destination, from: "--to")
    }

    func run() throws {
        try Failure.reporting {
            let source = options.configuration(readOnly: true)
            let cache = try TokenStore.open(source)
            let report: CopyReport
            do {
                report = try cache.copy(to: try Self.destination(destination, like: source), replacing: replace)
            } catch let error as TokenCacheError where [.storeAlreadyExists, .invalidArgument].contains(error.code) {
                Output.error(error.description)
                throw ExitCode(64)  // the destination given is not one a copy can go into
            }
            let records = report.recordCounts.values.reduce(0, +)
            if json {
                print(
                    JSONValue.object([
                        "destination": .string(report.destination),
                        "records": .counts(report.recordCounts),
                        "meta_records": .integer(Int64(report.metaRecords)),
                        "leases_left_behind": .integer(Int64(report.leasesLeftBehind)),
                        "replaced_records": .integer(Int64(report.replacedRecords)),
                        "seconds": .seconds(report.duration),
                    ]).prettyPrinted()
                )
            } else {
                var text = "Copied \(ProgressBar.grouped(records)) record\(records == 1 ? "" : "s") to \(report.destination) in "
                    + "\(String(format: "%.1f", report.duration)) s; the same key opens it."
                if report.replacedRecords > 0 { text += " \(ProgressBar.grouped(report.replacedRecords)) records it held were replaced." }
                if report.leasesLeftBehind > 0 { text += " \(report.leasesLeftBehind) refresh lease(s) were not copied." }
                print(Terminal.sanitize(text))
            }
        }
    }

    /// The destination's configuration: the source's key and settings, at `location` (a directory or a shared store's
    /// URL, with the store timeout of the environment).
    static func destination(_ location: String, like source: Configuration) throws(TokenCacheError) -> Configuration {
        var configuration: Configuration
        if Configuration.isSharedStoreURL(location) {
            configuration = try Configuration.forLocation(location, environment: ProcessInfo.processInfo.environment)
        } else {
            configuration = source
            configuration.storageLocation = nil
            configuration.directory = location
        }
        configuration.keySource = source.keySource
        configuration.maximumPassphraseCost = source.maximumPassphraseCost
        configuration.lockTimeout = source.lockTimeout
        configuration.readOnly = false
        return configuration
    }
}
