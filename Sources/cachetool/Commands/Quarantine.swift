import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool quarantine`: moves a damaged store aside and creates an empty one in its place.
struct Quarantine: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move a damaged store aside (STORE.corrupt-TIMESTAMP) and create an empty one in its place.",
        discussion: """
            For a store that cannot be used at all: it does not open (a damaged header or LMDB environment), LMDB's \
            meta pages disagree, or a B-tree page is damaged. The store directory is renamed, whole and untouched, \
            to STORE.corrupt-TIMESTAMP beside it (one rename: a crash leaves it under one name or the other), and \
            a new, empty store is created with the same key. Its users sign in again; the old files stay for a \
            later look. A store that opens and whose trees are whole is refused: damaged records are for `cachetool \
            verify --repair`, which keeps everything else.

            Asks before moving on a terminal; elsewhere --yes is required. Refused while any process has the store \
            open (the process is named).

            JSON keys: directory, moved_to, damage (null with --force).

            Exit codes: 0 moved and recreated, 1 not damaged (nothing moved), 64 usage or not confirmed, 66 store \
            or key not found, 74 I/O error, 75 the store is open in a process, 77 insecure permissions.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Do not ask.")
    var yes = false

    @Flag(help: "Move the store aside without checking that it is damaged (for a store whose check itself fails).")
    var force = false

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        try Failure.reporting {
            let configuration = options.configuration(readOnly: false)
            var damage: String? = nil
            if !force {
                damage = try TokenStore.damage(of: configuration)
                guard damage != nil else {
                    Output.error(
                        "the store at \(configuration.directory) opens and its trees are whole: nothing was moved "
                            + "(`cachetool verify` finds damaged records, `verify --repair` removes them)"
                    )
                    throw ExitCode(1)
                }
            }
            if !yes {
                guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else {
                    Output.error("moving a store aside needs --yes when it cannot ask on a terminal; nothing was moved")
                    throw ExitCode(64)
                }
                if let damage { FileHandle.standardError.write(Data((Terminal.sanitize("The store is damaged: \(damage)") + "\n").utf8)) }
                FileHandle.standardError.write(Data(Terminal.sanitize(
                    "Move \(configuration.directory) aside and create an empty store there (its accounts sign in again)? [y/N] "
                ).utf8))
                guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                    Output.error("nothing was moved")
                    throw ExitCode(64)
                }
            }
            var report = try TokenStore.quarantine(configuration, force: true)
            report.damage = damage
            if json {
                print(JSONValue.object([
                    "directory": .string(report.directory), "moved_to": .string(report.movedTo),
                    "damage": report.damage.map { .string($0) } ?? .null,
                ]).prettyPrinted())
            } else {
                print(Terminal.sanitize("Moved the damaged store to \(report.movedTo) and created an empty store at \(report.directory)."))
            }
        }
    }
}
