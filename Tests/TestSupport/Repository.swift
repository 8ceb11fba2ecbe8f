public import Foundation

/// The checkout this test build came from. Tests read what the repository holds (README.md, FORMAT.md, the sources,
/// fixtures) from where it is, not from copies in a bundle, so that a test reads what a reader of the repository reads.
public enum Repository {
    /// The folder that holds Package.swift, found upwards from this file.
    public static let root: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory
    }()

    /// `path`, relative to the root.
    public static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    /// The text of the file at `path`, relative to the root.
    public static func text(_ path: String) throws -> String { try String(contentsOf: url(path), encoding: .utf8) }
}
