import Foundation

/// A fresh private (0700) directory under the system's temporary one, removed after `body`.
public func withTemporaryDirectory<R>(prefix: String = "tc-test", _ body: (String) throws -> R) throws -> R {
    let path = try makeTemporaryDirectory(prefix: prefix)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// The same for an asynchronous `body` (another name: in an async context, an overload would take a synchronous
/// body for an asynchronous call).
public func withTemporaryDirectoryAsync<R>(prefix: String = "tc-test", _ body: (String) async throws -> R) async throws -> R {
    let path = try makeTemporaryDirectory(prefix: prefix)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// A fresh private directory that the caller removes (or a test that hands it to other processes keeps).
public func makeTemporaryDirectory(prefix: String = "tc-test") throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}
