import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheOperations

/// Moving a damaged store aside: only a store damaged as a whole (unless forced), never one in use, the old files
/// kept whole under a new name, and a new empty store with the same key in their place.
@Suite struct QuarantineTests {
    /// A store with one token, closed, in `root`.
    static func closedStore(_ root: String) throws -> TestStore {
        let store = TestStore(root: root)
        try KeyFile.create(at: store.keyFile)
        do {
            let cache = try TokenStore.create(store.configuration)
            try cache.put(Samples.accessToken())
        }
        return store
    }

    @Test func aHealthyStoreIsNotMovedUnlessForced() throws {
        try withTemporaryDirectory { root in
            let store = try Self.closedStore(root)
            #expect(try TokenStore.damage(of: store.configuration) == nil)
            #expect(errorCode { try TokenStore.quarantine(store.configuration) } == .invalidArgument)
            #expect(try TokenStore.open(store.configuration).list(AccessToken.self).records.count == 1)
        }
    }

    @Test(arguments: ["garbage", "zeroed meta pages"])
    func aDamagedStoreIsMovedAsideWholeAndAnEmptyOneTakesItsPlace(damage: String) throws {
        try withTemporaryDirectory { root in
            let store = try Self.closedStore(root)
            let dataFile = store.directory + "/data.mdb"
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: dataFile))
            if damage == "garbage" {
                try handle.write(contentsOf: Data((0..<16_384).map { _ in UInt8.random(in: 0...255) }))
            } else {
                try handle.write(contentsOf: Data(count: 8_192))
            }
            try handle.close()
            let damaged = try Data(contentsOf: URL(fileURLWithPath: dataFile))
            #expect(try TokenStore.damage(of: store.configuration) != nil)

            let report = try TokenStore.quarantine(store.configuration)
            #expect(report.damage != nil && report.directory == store.directory)
            #expect(report.movedTo.hasPrefix(store.directory + ".corrupt-"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: report.movedTo + "/data.mdb")) == damaged)
            let fresh = try TokenStore.open(store.configuration)
            #expect(try fresh.list(AccessToken.self).records.isEmpty && fresh.verify().isClean)
        }
    }

    @Test func aStoreInUseIsNotMoved() throws {
        try withTemporaryDirectory { root in
            let store = try Self.closedStore(root)
            let cache = try TokenStore.open(store.configuration)
            #expect(errorCode { try TokenStore.quarantine(store.configuration, force: true) } == .storeInUse)
            #expect(try cache.list(AccessToken.self).records.count == 1)
            #expect(!FileManager.default.fileExists(atPath: TokenStore.quarantineName(for: store.directory, at: Date())))
        }
    }

    /// Through a symbolic link the directory it names moves, and the link then names the new store; a second move in
    /// the same second gets a name of its own.
    @Test func aStoreBehindALinkMovesWhereItIsAndNamesNeverCollide() throws {
        try withTemporaryDirectory { root in
            let store = try Self.closedStore(root)
            let link = root + "/link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: store.directory)
            let linked = Configuration(directory: link, keySource: .keyFile(path: store.keyFile))
            let first = try TokenStore.quarantine(linked, force: true)
            #expect(first.movedTo.hasPrefix(store.directory + ".corrupt-"))
            #expect(try TokenStore.open(linked).list(AccessToken.self).records.isEmpty)
            let second = try TokenStore.quarantine(linked, force: true)
            #expect(second.movedTo != first.movedTo && FileManager.default.fileExists(atPath: first.movedTo + "/data.mdb"))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == store.directory)
        }
    }
}
