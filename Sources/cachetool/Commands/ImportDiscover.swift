import ArgumentParser
import Foundation
import TokenCache

#if canImport(Glibc)
import Glibc
import TokenCacheMSAL
#endif

/// `cachetool import --discover`: the plaintext caches found at the known locations (``PlaintextCaches``), each
/// counted with the import's own reader. Touches no store.
extension Import {
    /// One file found, examined.
    struct Discovered {
        let found: PlaintextCaches.Found
        var size: Int64? = nil
        var mode: Int? = nil
        var modified: Int64? = nil
        var summary: MSALCacheSummary? = nil
        var problem: String? = nil
    }

    static func examine(_ found: PlaintextCaches.Found) -> Discovered {
        var result = Discovered(found: found)
        var status = stat()
        guard lstat(found.path, &status) == 0 else {
            result.problem = "cannot be examined: \(String(cString: strerror(errno)))"
            return result
        }
        result.size = Int64(status.st_size)
        result.mode = Int(status.st_mode & 0o7777)
        result.modified = Int64(status.st_mtim.tv_sec)
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK:
            result.problem = "a symbolic link (not followed); give the file it points to"
            return result
        default:
            result.problem = "not a regular file"
            return result
        }
        if status.st_size == 0 {
            result.problem = "empty: no tokens (with a keyring, the tokens are there and this file only signals changes)"
            return result
        }
        do {
            let summary = try MSALCacheSummary(reading: .file(path: found.path))
            result.summary = summary
            if summary.invalidEntries > 0 {
                result.problem = "\(summary.invalidEntries) invalid entr\(summary.invalidEntries == 1 ? "y" : "ies") (import the others with --skip-invalid)"
            }
        } catch let error as TokenCacheError {
            result.problem = error.message
        } catch {
            result.problem = "cannot be read"
        }
        return result
    }

    static func discover(json: Bool) throws {
        let environment = ProcessInfo.processInfo.environment
        let caches = PlaintextCaches.find(environment).map(examine)
        let searched = PlaintextCaches.searched(environment)
        if json {
            print(Self.json(caches, searched: searched).prettyPrinted())
            return
        }
        guard !caches.isEmpty else {
            print("No plaintext MSAL cache found. Looked for:")
            for place in searched { print("  " + Terminal.sanitize(place)) }
            return
        }
        var table = Table(headers: ["TOOL", "PATH", "BYTES", "MODE", "MODIFIED", "ACCOUNTS", "TOKENS", "PROBLEM"])
        for cache in caches {
            table.append([
                cache.found.tool.rawValue, cache.found.path, cache.size.map(String.init) ?? "-",
                cache.mode.map { String(format: "%04o", $0) } ?? "-", cache.modified.map(timestamp) ?? "-",
                cache.summary.map { String($0.accounts) } ?? "-", cache.summary.map { String($0.tokens) } ?? "-",
                cache.problem ?? "",
            ])
        }
        // The last column may be empty: no padding left at the end of a line.
        print(table.render().split(separator: "\n").map { line in String(line.reversed().drop { $0 == " " }.reversed()) }.joined(separator: "\n"))
        print()
        print("Import one with: cachetool import --from azure-cli|azure-identity [--shred-source], or cachetool import FILE.")
        for cache in caches where (cache.mode ?? 0) & 0o077 != 0 && cache.summary != nil {
            Output.warning("\(cache.found.path) can be read by other users (mode \(String(format: "%04o", cache.mode ?? 0)))")
        }
    }

    /// `2024-05-01T12:00:00Z`.
    static func timestamp(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    static func json(_ caches: [Discovered], searched: [String]) -> JSONValue {
        func integer(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
        return .object([
            "caches": .array(caches.map { cache in
                .object([
                    "tool": .string(cache.found.tool.rawValue),
                    "path": .string(cache.found.path),
                    "size": cache.size.map { .integer($0) } ?? .null,
                    "mode": cache.mode.map { .string(String(format: "%04o", $0)) } ?? .null,
                    "modified": cache.modified.map { .string(timestamp($0)) } ?? .null,
                    "entries": cache.summary.map { counts($0.entries) } ?? .null,
                    "accounts": integer(cache.summary?.accounts),
                    "tokens": integer(cache.summary?.tokens),
                    "invalid_entries": integer(cache.summary?.invalidEntries),
                    "problem": cache.problem.map { .string($0) } ?? .null,
                ])
            }),
            "searched": .array(searched.map { .string($0) }),
        ])
    }
}
