import Foundation
import Testing

/// The layering of Docs/Architecture.md, checked on the sources against the allowlists of `ArchitectureRules`: an
/// import or a name that the tables do not allow fails here, not in a review (a transitive import would compile, so
/// the compiler alone does not), and so does a module or folder the tables do not know.
@Suite struct ArchitectureTests {
    static let tree = Result { try SourceTree() }

    /// A use of a name or an import against the tables: `name` is the declaration's name, or `import M`.
    struct Violation: Hashable {
        let path: String
        let name: String
        let line: Int
        let reason: String

        static func == (a: Self, b: Self) -> Bool { a.path == b.path && a.name == b.name }
        func hash(into hasher: inout Hasher) {
            hasher.combine(path)
            hasher.combine(name)
        }
    }

    @Test func everyModuleHasARowOfImports() throws {
        let modules = Set(try Self.tree.get().modules.keys)
        for module in modules.subtracting(ArchitectureRules.moduleImports.keys).sorted() {
            Issue.record("Sources/\(module) is a module missing from ArchitectureRules.moduleImports: decide which modules it may import")
        }
        for module in Set(ArchitectureRules.moduleImports.keys).subtracting(modules).sorted() {
            Issue.record("ArchitectureRules.moduleImports has a row for \(module), which is no module under Sources/: delete it")
        }
    }

    @Test func eachModuleImportsOnlyWhatItsRowAllows() throws {
        let tree = try Self.tree.get()
        #expect(tree.modules["TokenCache", default: []].count > 50)
        for (module, files) in tree.modules.sorted(by: { $0.key < $1.key }) {
            guard let allowed = ArchitectureRules.moduleImports[module] else { continue }
            for file in files {
                for (imported, line) in file.imports where imported != module && !allowed.contains(imported) {
                    Issue.record(
                        "Sources/\(file.path):\(line): imports \(imported); module \(module) may import only \(Self.list(allowed)) (ArchitectureRules.moduleImports)"
                    )
                }
            }
        }
    }

    /// In a module of several layers, each folder is one layer's; every source of a layer exists.
    @Test func everyFolderOfALayeredModuleIsALayer() throws {
        let tree = try Self.tree.get()
        let sources = Set(ArchitectureRules.layers.flatMap(\.sources))
        let layered = Dictionary(grouping: ArchitectureRules.layers, by: SourceTree.module(of:)).filter { $0.value.count > 1 }.keys
        for module in layered.sorted() {
            for folder in tree.folders[module, default: []] where !sources.contains("\(module)/\(folder)") {
                Issue.record("Sources/\(module)/\(folder) is the folder of no layer in ArchitectureRules.layers: decide what it may use")
            }
        }
        let paths = Set(tree.modules.values.joined().map(\.path))
        let folders = Set(tree.folders.flatMap { module, folders in [module] + folders.map { "\(module)/\($0)" } })
        for layer in ArchitectureRules.layers {
            for source in layer.sources where !folders.contains(source) && !paths.contains(source) {
                Issue.record("layer \(layer.name)'s source Sources/\(source) does not exist: correct or delete it")
            }
        }
        for path in ArchitectureRules.files.keys.sorted() where !tree.modules.values.joined().contains(where: { $0.path == path }) {
            Issue.record("ArchitectureRules.files has a row for \(path), which is no file under Sources/: correct or delete it")
        }
    }

    /// Every use against the tables is a known exception, and every known exception is still such a use.
    @Test func eachLayerUsesOnlyWhatItsRowAllows() throws {
        let violations = try Self.violations(in: Self.tree.get())
        let known = Set(ArchitectureRules.knownExceptions.flatMap { path, names in names.map { "\(path): \($0)" } })
        for violation in violations where !known.contains("\(violation.path): \(violation.name)") {
            Issue.record(
                "Sources/\(violation.path):\(violation.line): \(violation.reason). Use what the layer may, allow it in ArchitectureRules, or (a back-edge to remove) list it in ArchitectureRules.knownExceptions"
            )
        }
        let found = Set(violations.map { "\($0.path): \($0.name)" })
        for entry in known.subtracting(found).sorted() {
            Issue.record("ArchitectureRules.knownExceptions lists \(entry), which is no longer a use against the tables: delete the entry")
        }
    }

    /// The uses against the tables in the library's layers, one per file and name (at its first line).
    static func violations(in tree: SourceTree) -> [Violation] {
        let moduleNames = Set(tree.modules.keys)
        var violations: [Violation] = []
        for file in tree.modules.values.joined() {
            guard let layer = SourceTree.layer(of: file.path) else { continue }
            let module = SourceTree.module(of: layer)
            let fileGrants = ArchitectureRules.files[file.path]
            let reach = fileGrants.map { SourceTree.reach(of: $0, transitively: false) } ?? SourceTree.reach(of: layer)
            let rule =
                fileGrants.map { "this file may use only \(Self.list($0)) (ArchitectureRules.files)" } ?? Self.describe(layer, reach: reach)
            var found: Set<Violation> = []

            // Imports: the platform's the row names, and the modules of the layers and declarations it reaches.
            let reachedLayers = reach.layers.union(reach.declarations.map { String($0.split(separator: ".")[0]) })
            let reachedModules = Set(reachedLayers.compactMap { SourceTree.layer(named: $0).map(SourceTree.module(of:)) }).subtracting([module])
            // A layer that is a whole module imports what `moduleImports` lets its module import.
            let importable = layer.sources == [module] ? ArchitectureRules.moduleImports[module, default: []] : layer.platform.union(reachedModules)
            for (imported, line) in file.imports where !importable.contains(imported) {
                found.insert(Violation(
                    path: file.path, name: "import \(imported)", line: line,
                    reason: "imports \(imported); files of layer \(layer.name) may import only \(Self.list(importable))"
                ))
            }

            // Names: those another layer declares, unless the file declares one of that name itself.
            let local = file.localNames
            for (name, line) in file.uses(qualifiedBy: moduleNames) where !local.contains(name) {
                for owner in tree.declarations[name, default: []] where owner.layer != layer.name {
                    guard !reach.layers.contains(owner.layer), !reach.declarations.contains("\(owner.layer).\(name)") else { continue }
                    let violation = Violation(
                        path: file.path, name: name, line: line,
                        reason: "uses \(name), declared in layer \(owner.layer) (\(owner.path)); \(rule)"
                    )
                    if !found.contains(violation) { found.insert(violation) }
                }
            }
            violations += found.sorted { ($0.line, $0.name) < ($1.line, $1.name) }
        }
        return violations
    }

    /// A layer's rule as a message says it.
    static func describe(_ layer: ArchitectureRules.Layer, reach: (layers: Set<String>, declarations: Set<String>)) -> String {
        guard !layer.knows.isEmpty else { return "layer \(layer.name) knows no other layer (ArchitectureRules.layers)" }
        let direct = Set(layer.knows)
        let through = reach.layers.subtracting(direct)
        return "layer \(layer.name) knows \(layer.knows.joined(separator: ", "))"
            + (through.isEmpty ? "" : " and, through them, \(Self.list(through))") + " (ArchitectureRules.layers)"
    }

    static func list(_ names: some Collection<String>) -> String {
        names.isEmpty ? "nothing" : names.sorted().joined(separator: ", ")
    }

    /// The lexer the checks rest on: a name in a comment or a string is no use, an interpolation's is, and an
    /// extension declares nothing.
    @Test func theScannerSeesCodeNotCommentsOrLiterals() {
        let source = SwiftSource(
            path: "TokenCache/Model/Example.swift",
            text: ##"""
                @_spi(Benchmarking) public import TokenCacheRecords
                @testable internal import struct TokenCacheStorage.StorageError
                /// RecordStore in a doc comment
                public struct Example: Sendable { /* CacheReader /* nested */ Keyring */
                    enum Nested {}
                    let a = "TokenStore \(FieldMap.self) \("RecordBackend")"
                    let b = #"CacheWriter \#(BlindIndex.self)"#
                    let c = """
                        Configuration
                        """
                    let d = TokenCache.Secret("x").count + Other.Secret
                }
                extension AccessToken {}
                func free() {}
                final class Box {}
                """##)
        #expect(source.imports.map(\.module) == ["TokenCacheRecords", "TokenCacheStorage"])
        #expect(source.declarations == ["Example", "free", "Box"])
        #expect(source.localNames == ["Example", "Nested", "free", "Box"])
        let uses = Set(source.uses(qualifiedBy: ["TokenCache"]).map(\.name))
        #expect(uses.isSuperset(of: ["FieldMap", "BlindIndex", "Secret", "AccessToken", "Sendable", "TokenCache", "Other"]))
        #expect(uses.isDisjoint(with: ["RecordStore", "CacheReader", "Keyring", "TokenStore", "RecordBackend", "CacheWriter", "Configuration"]))
        #expect(source.uses(qualifiedBy: ["TokenCache"]).filter { $0.name == "Secret" }.map(\.line) == [11])
    }
}
