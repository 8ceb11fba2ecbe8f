import Foundation

/// The files under `directory` (paths relative to it) whose bytes hold `text`: what a canary test expects to be
/// empty when a secret must never reach the disk.
public func files(under directory: String, holding text: String) throws -> [String] {
    let needle = Data(text.utf8)
    return try FileManager.default.subpathsOfDirectory(atPath: directory).filter { name in
        var isDirectory: ObjCBool = false
        let path = directory + "/" + name
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return false }
        return try Data(contentsOf: URL(fileURLWithPath: path)).range(of: needle) != nil
    }
}
