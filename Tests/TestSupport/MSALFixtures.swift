public import Foundation

/// Serialized token caches as each MSAL SDK writes them (in the folder of this name beside this file): what the
/// import tests of the library and of `cachetool import` read.
public enum MSALFixtures {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("MSALFixtures")

    /// One file a SDK (or SDK version).
    public static let names = ["dotnet.json", "go.json", "js-node.json", "objc.json", "python-1.39.json", "python-legacy.json"]

    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    public static func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: url(name))) }
}
