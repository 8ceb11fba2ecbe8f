import Foundation
import Testing
import TokenCacheLMDB

@Suite struct RegistryTests {
    @Test func openingTheSameStoreAgainReturnsTheIdenticalInstance() throws {
        let root = try TemporaryDirectory()
        let store = try root.subdirectory("store")
        let link = root.url.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: store)
        try FileManager.default.createDirectory(atPath: root.url.appendingPathComponent("sibling").path, withIntermediateDirectories: false)

        let first = try Environment.open(directory: store, databases: ["t"])
        let samePath = try Environment.open(directory: store, databases: ["t"])
        let viaSymlink = try Environment.open(directory: link, databases: ["t"])
        let viaDotDot = try Environment.open(directory: store + "/../store", databases: ["t"])
        let viaSibling = try Environment.open(directory: root.path + "/sibling/../store/.", databases: ["t"])

        #expect(first === samePath)
        #expect(first === viaSymlink)
        #expect(first === viaDotDot)
        #expect(first === viaSibling)
        #expect(!first.directory.contains("..") && !first.directory.hasSuffix("link"))

        // A write through one reference is visible through the others: it is one MDB_env.
        let db = try #require(viaSymlink.database("t"))
        try viaSymlink.write { txn in try txn.put(in: db, key: "k", value: "v") }
        #expect(try first.read { try $0.string(in: db, forKey: "k") } == "v")
    }

    @Test func aDifferentDatabaseListForAnOpenStoreIsRejected() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(directory: directory.path, databases: ["a", "b"])
        #expect(try Environment.open(directory: directory.path, databases: ["b", "a", "a"]) === environment)
        #expect(throws: LMDBError.invalidArgument) {
            _ = try Environment.open(directory: directory.path, databases: ["a"])
        }
        #expect(throws: LMDBError.invalidArgument) {
            _ = try Environment.open(directory: directory.path, databases: ["a", "b", "c"])
        }
    }

    @Test func releasingTheLastReferenceClosesAndUnregistersTheStore() throws {
        let directory = try TemporaryDirectory()
        weak var released: Environment?
        var firstIdentity: FileIdentity?
        do {
            let environment = try Environment.open(directory: directory.path, databases: ["t"])
            released = environment
            firstIdentity = environment.identity
        }
        #expect(released == nil)
        let reopened = try Environment.open(directory: directory.path, databases: ["t", "u"])
        #expect(reopened.identity == firstIdentity)
        #expect(reopened.database("u") != nil)
    }

    @Test func concurrentOpensOfOneStoreShareOneInstance() throws {
        let directory = try TemporaryDirectory()
        let opened = Log()
        let path = directory.path
        let instances = InstanceBox()
        runOnThreads((0..<8).map { _ in
            {
                for _ in 0..<20 {
                    do {
                        let environment = try Environment.open(directory: path, databases: ["t"])
                        instances.record(environment)
                    } catch {
                        opened.append("\(error)")
                    }
                }
            }
        })
        #expect(opened.all.isEmpty)
        #expect(instances.distinctCount == 1)
    }

    @Test func openRefusesMissingDirectoriesAndBadArguments() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: LMDBError.noSuchFile) {
            _ = try Environment.open(directory: directory.path + "/missing", databases: ["t"])
        }
        #expect(throws: LMDBError.invalidArgument) { _ = try Environment.open(directory: directory.path, databases: [""]) }
        var options = EnvironmentOptions()
        options.maxReaders = 0
        #expect(throws: LMDBError.invalidArgument) {
            _ = try Environment.open(directory: directory.path, databases: ["t"], options: options)
        }
        options = EnvironmentOptions()
        options.maxDatabases = 1
        #expect(throws: LMDBError.dbsFull) {
            _ = try Environment.open(directory: directory.path, databases: ["a", "b"], options: options)
        }
        // After those failures the directory still opens normally.
        _ = try Environment.open(directory: directory.path, databases: ["t"])
    }
}

/// Keeps every instance returned by concurrent opens alive, so identity comparisons are meaningful.
final class InstanceBox: Sendable {
    private let instances = Log()
    private let strong = StrongList()
    func record(_ environment: Environment) {
        strong.append(environment)
        instances.append("\(ObjectIdentifier(environment))")
    }
    var distinctCount: Int { Set(instances.all).count }
}

import Synchronization

final class StrongList: Sendable {
    private let items = Mutex<[Environment]>([])
    func append(_ environment: Environment) { items.withLock { $0.append(environment) } }
}
