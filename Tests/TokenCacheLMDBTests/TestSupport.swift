import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCacheLMDB

/// A unique directory under the system temporary directory, created with mode 0700 and removed on deinit.
final class TemporaryDirectory {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("TokenCacheLMDBTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700]
        )
    }

    /// A new 0700 subdirectory.
    func subdirectory(_ name: String) throws -> String {
        let sub = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(
            at: sub, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700]
        )
        return sub.path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

func bytes(_ string: String) -> [UInt8] {
    Array(string.utf8)
}

func string(_ buffer: UnsafeRawBufferPointer) -> String {
    String(decoding: buffer, as: UTF8.self)
}

extension WriteTransaction {
    func put(in database: Database, key: String, value: String) throws {
        try bytes(value).withUnsafeBytes { try put(in: database, key: bytes(key), value: $0) }
    }
}

extension ReadTransaction {
    func string(in database: Database, forKey key: String) throws -> String? {
        try withValue(in: database, forKey: bytes(key)) { String(decoding: $0, as: UTF8.self) }
    }

    func keys(in database: Database, prefix: String) throws -> [String] {
        var keys: [String] = []
        try forEach(in: database, prefix: bytes(prefix)) { key, _ in
            keys.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return keys
    }
}

/// Opens a fresh store with one database named "t".
func makeStore(
    in directory: TemporaryDirectory,
    configure: (inout EnvironmentOptions) -> Void = { _ in }
) throws -> (Environment, Database) {
    try makeStore(at: directory.path, configure: configure)
}

func makeStore(
    at path: String,
    configure: (inout EnvironmentOptions) -> Void = { _ in }
) throws -> (Environment, Database) {
    var options = EnvironmentOptions()
    configure(&options)
    let environment = try Environment.open(directory: path, databases: ["t"], options: options)
    guard let database = environment.database("t") else { throw LMDBError.notFound }
    return (environment, database)
}

/// `stat` permission bits of a file.
func permissions(ofFileAt path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

func fileSize(atPath path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.size] as? NSNumber)?.intValue ?? -1
}

/// Messages collected from several threads.
final class Log: Sendable {
    private let messages = Mutex<[String]>([])
    func append(_ message: String) { messages.withLock { $0.append(message) } }
    var all: [String] { messages.withLock { $0 } }
}

/// Runs each closure on its own `Thread` and waits for all of them.
func runOnThreads(_ bodies: [@Sendable () -> Void]) {
    let group = DispatchGroup()
    for body in bodies {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.start()
    }
    group.wait()
}
