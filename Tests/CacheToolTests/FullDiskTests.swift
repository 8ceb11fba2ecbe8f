import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// A full filesystem gives `storageFull` (exit 74) and keeps what is stored, never a SIGBUS. The filesystem is a small
/// tmpfs mounted in a private mount namespace, which needs root (CI runs as root).
@Suite(.enabled(if: getuid() == 0, "mounting a private tmpfs needs root")) struct FullDiskTests {
    /// Runs `script` in a private mount namespace (where it mounts its small tmpfs at `$M`), with `$T` the tool and
    /// `$K` the key file. Each step it runs prints "name result"; stderr is collected in `$M.err`. Returns the output,
    /// the results by step name, and the messages.
    static func runOnSmallFilesystem(
        _ script: String, store: CLIStore, mountPoint: String, extra: [String: String]
    ) throws -> (text: String, results: [String: String], messages: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--mount", "--propagation", "private", "/bin/sh", "-c", script]
        process.environment = ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": store.root, "M": mountPoint, "T": CacheTool.binary.path, "K": store.keyFile]
            .merging(extra) { $1 }.merging(CacheTool.sanitizerOptions) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "the script failed: \(text)")
        var results: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { results[String(parts[0])] = String(parts[1]) }
        }
        return (text, results, (try? String(contentsOfFile: mountPoint + ".err", encoding: .utf8)) ?? "")
    }

    @Test func initAndWritesOnAFullFilesystemReportStorageFull() throws {
        try CLIStore.with { store in
            let mountPoint = store.root + "/small"
            #expect(mkdir(mountPoint, 0o700) == 0)
            let response = store.root + "/response.json"
            try #"{"access_token":"AT-FULL-1","token_type":"Bearer","expires_in":3600,"refresh_token":"RT-FULL-1","client_info":"eyJ1aWQiOiJ1IiwidXRpZCI6InQifQ"}"#
                .write(toFile: response, atomically: true, encoding: .utf8)
            // Each step prints "name exit-status"; stderr is kept for the messages.
            let script = #"""
                set -u
                mount -t tmpfs -o size=512k,mode=0700 tmpfs "$M" || exit 90
                run() { name=$1; shift; "$T" "$@" --key-file "$K" 2>>"$M.err"; echo "$name $?"; }
                run init-with-space init --store "$M/a"
                run ingest-with-space ingest --store "$M/a" --client-id c --authority https://login.microsoftonline.com/t --scopes s "$R"
                dd if=/dev/zero of="$M/fill" bs=4096 2>/dev/null
                run init-when-full init --store "$M/b"
                run ingest-when-full ingest --store "$M/a" --client-id c --authority https://login.microsoftonline.com/t --scopes s2 "$R"
                run verify-when-full verify --store "$M/a"
                "$T" inspect --store "$M/a" --key-file "$K" --json --reveal-secrets | grep -c '"AT-FULL-1"' | sed 's/^/stored-token-count /'
                # Crumbs: single tokens until none fits (the store file may still have had free pages).
                i=0; while [ $i -lt 200 ]; do "$T" ingest --store "$M/a" --key-file "$K" --client-id c$i --authority https://login.microsoftonline.com/t --scopes s "$R" 2>/dev/null || break; i=$((i+1)); done
                run purge-when-full purge-expired --store "$M/a" --older-than 0s
                run remove-account-when-full remove-account --store "$M/a" --account u.t --all-clients
                rm -f "$M/fill"
                run ingest-after-freeing ingest --store "$M/a" --client-id c --authority https://login.microsoftonline.com/t --scopes s3 "$R"
                run verify-after-freeing verify --store "$M/a"
                """#
            let (text, results, messages) = try Self.runOnSmallFilesystem(script, store: store, mountPoint: mountPoint, extra: ["R": response])
            #expect(results["init-with-space"] == "0" && results["ingest-with-space"] == "0", "\(text)")
            #expect(results["init-when-full"] == "74", "init on a full filesystem: \(text) \(messages)")
            #expect(results["ingest-when-full"] == "74", "\(text) \(messages)")
            #expect(results["verify-when-full"] == "0", "\(text) \(messages)")
            #expect(results["stored-token-count"] == "1", "\(text)")
            // Removing needs no new room on a full disk, and the store takes writes again once space is freed.
            #expect(results["purge-when-full"] == "0", "\(text) \(messages)")
            #expect(results["remove-account-when-full"] == "0", "\(text) \(messages)")
            #expect(results["ingest-after-freeing"] == "0", "\(text) \(messages)")
            #expect(results["verify-after-freeing"] == "0", "\(text) \(messages)")
            #expect(messages.components(separatedBy: "storageFull").count == 3, "\(messages)")
            #expect(!messages.contains("crashed"), "\(messages)")
        }
    }

    /// Thousands of expired tokens on a full disk: a purge and a cap remove them (the disk reserve, and smaller
    /// transactions when a large one does not fit), and the store takes writes again once space is freed.
    @Test func aPurgeAndACapEmptyAFullDiskInSmallerBatches() throws {
        try CLIStore.with { store in
            // The tokens to import, exported from a scratch store outside the small filesystem.
            let scratch = CLIStore(root: store.root + "/scratch")
            try FileManager.default.createDirectory(atPath: scratch.root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            #expect(try scratch.run(["init"]).status == 0)
            try TokenStore.open(scratch.configuration).write { writer in
                for index in 0..<3_000 {
                    try writer.put(AccessToken(
                        homeAccountID: "u\(index).t", environment: "login.microsoftonline.com", clientID: "c", realm: "t", target: "s.read",
                        secret: Secret("full-\(index)"), cachedAt: 1_000_000_000 + Int64(index), expiresOn: index < 2_900 ? 1_000_003_600 : 4_000_000_000
                    ))
                }
            }
            let cache = store.root + "/cache.json"
            #expect(try scratch.run(["export", "--include-secrets", "-o", cache]).status == 0)
            let mountPoint = store.root + "/small"
            #expect(mkdir(mountPoint, 0o700) == 0)
            let script = #"""
                set -u
                mount -t tmpfs -o size=8m,mode=0700 tmpfs "$M" || exit 90
                run() { name=$1; shift; "$T" "$@" --key-file "$K" 2>>"$M.err"; echo "$name $?"; }
                run init init --store "$M/a"
                run import import --store "$M/a" "$C"
                dd if=/dev/zero of="$M/fill" bs=4096 2>/dev/null
                run purge-when-full purge-expired --store "$M/a"
                run cap-when-full cap --store "$M/a" --access-tokens 50
                run verify-when-full verify --store "$M/a"
                "$T" inspect --store "$M/a" --key-file "$K" --summary --json | tr -d ' \n' | sed 's/^/summary /'; echo
                rm -f "$M/fill"
                run import-after-freeing import --store "$M/a" "$C"
                """#
            let (text, results, messages) = try Self.runOnSmallFilesystem(script, store: store, mountPoint: mountPoint, extra: ["C": cache])
            for step in ["init", "import", "purge-when-full", "cap-when-full", "verify-when-full", "import-after-freeing"] {
                #expect(results[step] == "0", "\(step): \(text) \(messages)")
            }
            // The 2,900 expired tokens purged, then the cap evicted 50 of the 100 left.
            #expect(results["summary"]?.contains(#""access_tokens":{"expired":0,"refresh_due":0,"total":50,"valid":50}"#) == true, "\(text)")
        }
    }
}
