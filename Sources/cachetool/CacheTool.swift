import ArgumentParser
import Foundation
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool`: create, inspect and debug token-cache stores. Parses, calls the library, renders; no storage
/// logic lives here.
@main
struct CacheTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cachetool",
        abstract: "Create, inspect and debug encrypted token-cache stores.",
        discussion: """
            The store is found at --store, else $TOKEN_CACHE_DIR, else $XDG_DATA_HOME/token-cache, \
            else ~/.local/share/token-cache. Its key comes from --key-file, else $TOKEN_CACHE_KEY (base64), \
            else $TOKEN_CACHE_PASSPHRASE, else $TOKEN_CACHE_KEY_FILE, else $XDG_CONFIG_HOME/token-cache/key \
            (~/.config/token-cache/key).

            Exit codes: 0 success, 1 other failure, 64 usage, 65 corrupt data, 66 store or key not found, \
            74 storage full or I/O error, 75 conflict (retry), 77 wrong key or insecure permissions, 78 unsupported environment or format. \
            `lookup --exit-code` adds 10 (refresh) and 11 (interaction required).
            """,
        version: versionText,
        subcommands: [
            Init.self, Migrate.self, Inspect.self, Info.self, Status.self, Stats.self, Verify.self, Backup.self, Copy.self, Compact.self, PurgeExpired.self, Cap.self, Rekey.self, Quarantine.self, Salvage.self, Ingest.self, Lookup.self,
            Accounts.self, RemoveAccount.self, Import.self,
            Export.self, SampleData.self, Bench.self, BenchChild.self,
        ]
    )

    /// The version of this tool.
    static let toolVersion = "0.1.0"

    /// `cachetool --version`: the tool, the store format it reads and writes, and the C libraries it loaded.
    static var versionText: String {
        let versions = ComponentVersions.current
        return """
            cachetool \(toolVersion)
            store format \(versions.formatWriteVersion) (reads versions 1 to \(versions.formatReadVersion))
            liblmdb \(versions.lmdb)
            libsodium \(versions.sodium)
            """
    }

    /// `CLOCK_MONOTONIC` when `main` was entered (`cachetool bench` measures process start up to here).
    nonisolated(unsafe) static var mainEntered: UInt64 = 0

    static func main() {
        mainEntered = MonotonicClock.nanoseconds()
        // A reader that goes away (`cachetool inspect | head`) makes writes fail with EPIPE, which the streaming
        // output stops on quietly, instead of a SIGPIPE that would look like a crash.
        signal(SIGPIPE, SIG_IGN)
        do {
            try ProcessHardening.apply(processName: "cachetool")
        } catch {
            Output.error("\(error)")
            Glibc.exit(78)
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            try command.run()
        } catch let refusal as ValidationError {
            Refusal.exit(refusal, command: type(of: command))
        } catch {
            exit(withError: error)
        }
    }
}
