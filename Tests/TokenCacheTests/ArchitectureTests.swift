import Foundation
import Testing

/// The layering of Docs/Architecture.md, checked on the sources: an import or a name that crosses a layer the wrong
/// way fails here, not in a review.
@Suite struct ArchitectureTests {
    /// The repository's `Sources/` folder, found from this file's path.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Every Swift file under `Sources/<folder>`, with its text.
    static func files(in folder: String) throws -> [(path: String, text: String)] {
        let root = sources.appendingPathComponent(folder)
        let paths = try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { $0.hasSuffix(".swift") }.sorted()
        return try paths.map { ("\(folder)/\($0)", try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// The modules a file imports.
    static func imports(_ text: String) -> Set<String> {
        var modules: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            if let index = words.firstIndex(of: "import"), index + 1 < words.count,
                words[..<index].allSatisfy({ ["@testable", "internal", "package", "public", "private", "fileprivate"].contains($0) })
            {
                modules.insert(words[index + 1])
            }
        }
        return modules
    }

    /// Names used outside comments (a rough lexer: line comments and doc comments are dropped).
    static func code(_ text: String) -> String {
        text.split(separator: "\n").map { line in
            guard let comment = line.range(of: "//") else { return String(line) }
            return String(line[..<comment.lowerBound])
        }.joined(separator: "\n")
    }

    static func names(_ text: String, from candidates: [String]) -> [String] {
        let code = code(text)
        return candidates.filter { name in
            code.range(of: "\\b\(name)\\b", options: .regularExpression) != nil
        }
    }

    @Test func theLibraryReachesLMDBOnlyThroughTheStorageModule() throws {
        let files = try Self.files(in: "TokenCache")
        #expect(files.count > 50)
        for file in files {
            let crossing = Self.imports(file.text).intersection(["TokenCacheLMDB", "CLMDB"])
            #expect(crossing.isEmpty, "\(file.path) imports \(crossing.sorted())")
        }
    }

    /// An operator's commands run over the storage seam's maintenance protocols and the record store's package API:
    /// no wrapper below the seam, and nothing of the client.
    @Test func theOperationsReachStorageOnlyThroughTheSeam() throws {
        try Self.expectModule(
            "TokenCacheOperations", atLeast: 10,
            imports: ["TokenCache", "TokenCacheStorage", "TokenCacheRecords", "TokenCacheSodium", "Foundation", "Glibc"], names: [])
    }

    /// Checks that every file of a module imports only `allowed` and names none of `forbidden`.
    static func expectModule(
        _ folder: String, atLeast count: Int, imports allowed: Set<String>, names forbidden: [String]
    ) throws {
        let files = try Self.files(in: folder)
        #expect(files.count >= count)
        for file in files {
            let imports = Self.imports(file.text)
            #expect(imports.isSubset(of: allowed), "\(file.path) imports \(imports.subtracting(allowed).sorted())")
            let used = Self.names(file.text, from: forbidden)
            #expect(used.isEmpty, "\(file.path) names \(used)")
        }
    }

    @Test func theStorageModuleKnowsNoEntityAndNoKey() throws {
        try Self.expectModule(
            "TokenCacheStorage", atLeast: 4, imports: ["TokenCacheLMDB", "Glibc", "Synchronization"],
            names: ["AccessToken", "RefreshToken", "Account", "Keyring", "Secret", "TokenCacheError"])
    }

    @Test func theRecordModuleKnowsNoEntityAndNoBackend() throws {
        try Self.expectModule(
            "TokenCacheRecords", atLeast: 10, imports: ["TokenCacheSodium", "Foundation", "Glibc"],
            names: [
                "AccessToken", "RefreshToken", "Account", "IDToken", "AppMetadata", "EntityKind", "Secret", "JSONValue",
                "TokenCacheError", "ScopeSet", "RecordBackend", "RecordReading", "StorageError", "LMDB",
            ])
    }

    /// The record layer's names that stay out of the domain's pure layers (its one ASCII folding is allowed).
    static let recordNames = [
        "FieldTable", "FieldMap", "FieldEncoder", "FieldDecoder", "BlindIndex", "Keyring", "RecordEnvelope", "ByteReader",
        "ByteWriter", "FormatConstants", "DatabaseName", "FormatError", "StoreHeader",
    ]

    @Test func theRulesArePure() throws {
        try Self.expectModule(
            "TokenCacheModel/Rules", atLeast: 8, imports: ["TokenCacheRecords"],
            names: ["RecordStore", "RecordReading", "RecordWriting", "RecordBackend", "CacheReader", "CacheWriter", "TokenStore"]
                + Self.recordNames)
    }

    /// Entities are plain values: how they are encoded, keyed and found lives in `Codecs/` and `Flows/`.
    @Test func theModelKnowsNoFormatKeyOrQuery() throws {
        try Self.expectModule(
            "TokenCacheModel/Model", atLeast: 8, imports: ["TokenCacheSodium", "Foundation"],
            names: ["RecordStore", "SilentLookupQuery", "StorableEntity", "storageKey", "bucketPrefix"] + Self.recordNames)
    }

    @Test func aLookupIsPlannedAndJudgedWithoutTheStore() throws {
        for path in ["SilentLookupPlan.swift", "AccessTokenChoice.swift"] {
            let text = try #require(Self.files(in: "TokenCache/Flows").first { $0.path.hasSuffix("/" + path) }).text
            let used = Self.names(text, from: ["RecordStore", "RecordReading", "RecordWriting", "RecordBackend", "CacheReader", "Keyring"])
            #expect(used.isEmpty, "\(path) names \(used)")
        }
    }
}
