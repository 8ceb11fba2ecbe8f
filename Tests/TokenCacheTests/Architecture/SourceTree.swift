import Foundation
import TestSupport

/// The Swift files under `Sources/`, by module, and which layer of `ArchitectureRules.layers` declares each top-level
/// name.
struct SourceTree {
    /// Module (folder under `Sources/`) → its Swift files.
    let modules: [String: [SwiftSource]]
    /// Module → the folders directly under it (a DocC catalog apart).
    let folders: [String: [String]]
    /// Name → where it is declared: the layer and the file.
    let declarations: [String: [(layer: String, path: String)]]

    static let root = Repository.url("Sources")

    init() throws {
        let fileManager = FileManager.default
        var modules: [String: [SwiftSource]] = [:]
        for module in try fileManager.contentsOfDirectory(atPath: Self.root.path).sorted() {
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: Self.root.appendingPathComponent(module).path, isDirectory: &isDirectory), isDirectory.boolValue
            else { continue }
            let folder = Self.root.appendingPathComponent(module)
            let paths = try fileManager.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
            modules[module] = try paths.map { path in
                SwiftSource(path: "\(module)/\(path)", text: try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8))
            }
        }
        self.modules = modules
        var folders: [String: [String]] = [:]
        for module in modules.keys {
            let folder = Self.root.appendingPathComponent(module)
            folders[module] = try fileManager.contentsOfDirectory(atPath: folder.path).filter { name in
                var isDirectory: ObjCBool = false
                return fileManager.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &isDirectory) && isDirectory.boolValue
                    && !name.hasSuffix(".docc")
            }.sorted()
        }
        self.folders = folders
        var declarations: [String: [(String, String)]] = [:]
        for file in modules.values.joined() {
            guard let layer = Self.layer(of: file.path) else { continue }
            for name in file.declarations { declarations[name, default: []].append((layer.name, file.path)) }
        }
        self.declarations = declarations
    }

    /// The layer a file belongs to: the one with the longest source that is the file or a folder holding it.
    static func layer(of path: String) -> ArchitectureRules.Layer? {
        var best: (layer: ArchitectureRules.Layer, length: Int)? = nil
        for layer in ArchitectureRules.layers {
            for source in layer.sources where path == source || path.hasPrefix(source + "/") {
                if source.count > best?.length ?? -1 { best = (layer, source.count) }
            }
        }
        return best?.layer
    }

    /// The module a layer's files are in.
    static func module(of layer: ArchitectureRules.Layer) -> String {
        String(layer.sources[0].split(separator: "/")[0])
    }

    static func layer(named name: String) -> ArchitectureRules.Layer? {
        ArchitectureRules.layers.first { $0.name == name }
    }

    /// What a layer may use: the layers it knows and, in turn, the layers those know; and the single declarations
    /// it is granted (`Layer.Name`: a layer's own, not handed on to the layers that know it).
    static func reach(of layer: ArchitectureRules.Layer) -> (layers: Set<String>, declarations: Set<String>) {
        reach(of: layer.knows, transitively: true)
    }

    static func reach(of grants: [String], transitively: Bool) -> (layers: Set<String>, declarations: Set<String>) {
        var layers: Set<String> = []
        var pending = grants.filter { !$0.contains(".") }
        while let grant = pending.popLast() {
            if layers.insert(grant).inserted, transitively, let known = layer(named: grant) {
                pending += known.knows.filter { !$0.contains(".") }
            }
        }
        return (layers, Set(grants.filter { $0.contains(".") }))
    }
}
