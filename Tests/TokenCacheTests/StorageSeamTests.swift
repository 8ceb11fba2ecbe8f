import Foundation
import TestSupport
import Testing

/// The rule of Docs/Architecture.md's storage seam, checked on the sources: the library and the tool reach storage
/// through the seam alone. A backend type is named in one place, where the configuration chooses it; no file of a
/// store directory is spelled as a path; no storage wrapper is imported. (A transitive import would compile, and a
/// path built by hand works until a second backend arrives, so neither the compiler nor the tests of one backend
/// catch a way around the seam.)
@Suite struct StorageSeamTests {
    /// The repository's `Sources/` folder.
    static let sources = Repository.url("Sources")

    /// The one file that chooses a backend from a configuration.
    static let choice = "TokenCache/Configuration+Storage.swift"

    /// The backends' own types, and the names of their files, which only the storage modules know.
    static let backendNames = ["LMDBRecordBackend", "LMDBStorageLocation", "InMemoryRecordBackend", "InMemoryStorageLocation", "StoreFileName"]

    /// A store file's name as a string literal or as a path component in one: `"data.mdb"`, `dir + "/lock.mdb"`,
    /// `"\(dir)/open.lock"`. Prose that mentions a file (help text, a label) is not a path.
    static let storeFilePath = #"["/](data|lock)\.mdb\b|["/](open|writer)\.lock\b"#

    /// The library's modules above the seam (the core, the operator's commands, MSAL interop, the benchmark SPI) and
    /// the tool.
    static let folders = ["TokenCache", "TokenCacheOperations", "TokenCacheMSAL", "TokenCacheBenchmarking", "cachetool"]

    /// Every Swift file under the library's and the tool's sources, with its code (line comments dropped: they may
    /// describe a backend's files).
    static func files() throws -> [(path: String, code: String)] {
        try folders.flatMap { folder in
            let root = sources.appendingPathComponent(folder)
            let paths = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".swift") }.sorted()
            return try paths.map { path in
                let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                    line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
                }
                return ("\(folder)/\(path)", code.joined(separator: "\n"))
            }
        }
    }

    static func matches(_ pattern: String, in code: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: code, range: NSRange(code.startIndex..., in: code)).compactMap { Range($0.range, in: code).map { String(code[$0]) } }
    }

    @Test func aBackendIsNamedOnlyWhereTheConfigurationChoosesIt() throws {
        let files = try Self.files()
        #expect(files.count > 100)
        let pattern = "\\b(" + Self.backendNames.joined(separator: "|") + ")\\b"
        for file in files where file.path != Self.choice {
            let named = Self.matches(pattern, in: file.code)
            #expect(named.isEmpty, "\(file.path) names \(Set(named).sorted()): choose a backend in \(Self.choice), reach it through the seam")
        }
        // The choice is where this test says it is (a moved choice must move this test's allowance with it).
        let choice = try #require(files.first { $0.path == Self.choice })
        #expect(Self.matches(pattern, in: choice.code).contains("LMDBRecordBackend"))
    }

    @Test func noStoreFileIsSpelledAsAPathOutsideTheStorageModules() throws {
        for file in try Self.files() {
            let paths = Self.matches(Self.storeFilePath, in: file.code)
            #expect(paths.isEmpty, "\(file.path) spells a store file as a path (\(paths)): ask the StorageLocation for its files")
        }
    }

    @Test func neitherTheLibraryNorTheToolImportsTheLMDBWrapper() throws {
        for file in try Self.files() {
            let imports = Self.matches(#"(?m)^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:internal |package |public |private )?import\s+(TokenCacheLMDB|CLMDB)\b"#, in: file.code)
            #expect(imports.isEmpty, "\(file.path): \(imports)")
        }
    }
}
