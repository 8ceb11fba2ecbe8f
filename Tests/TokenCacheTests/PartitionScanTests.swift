import Foundation
import Testing
@testable import TokenCache

/// Streaming reads by home account: every partition once, in storage order, holding exactly the records of its home
/// account; orphan and app-only tokens form partitions of their own; releasing scanned pages changes nothing.
@Suite struct PartitionScanTests {
    static let environment = "login.microsoftonline.com"

    /// Three people (two with Account records, one whose tokens are orphans) and app-only tokens.
    static func populate(_ cache: TokenStore) throws {
        try cache.write { writer in
            for (home, username) in [("a.t", "a@x"), ("B.T", "b@x")] {
                try writer.put(Account(homeAccountID: home, environment: environment, realm: "t", localAccountID: "l", username: username, authorityType: "MSSTS"))
                try writer.put(Account(homeAccountID: home, environment: environment, realm: "guest", localAccountID: "l", username: username, authorityType: "MSSTS"))
            }
            for home in ["a.t", "b.t", "orphan.t", ""] {
                for client in ["c1", "c2"] {
                    try writer.put(AccessToken(
                        homeAccountID: home, environment: environment, clientID: client, realm: "t", target: "s.read",
                        secret: Secret("at"), cachedAt: 0, expiresOn: 9_999_999_999
                    ))
                    if !home.isEmpty {
                        try writer.put(RefreshToken(homeAccountID: home, environment: environment, clientID: client, secret: Secret("rt")))
                        try writer.put(IDToken(homeAccountID: home, environment: environment, clientID: client, realm: "t", secret: Secret("id")))
                    }
                }
            }
            try writer.put(AppMetadata(clientID: "c1", environment: environment, familyID: "1"))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func partitionsCoverEveryPerAccountRecordOnce(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try Self.populate(cache)
            try cache.read { reader in
                var partitions: [HomeAccountPartition] = []
                try reader.forEachPartition { partitions.append($0); return true }
                // a.t and b.t (case-insensitive: B.T is b.t), orphan.t, app-only.
                #expect(partitions.count == 4)
                #expect(partitions == partitions.sorted() && Set(partitions).count == 4)
                #expect(Set(partitions) == Set(["a.t", "B.t", "orphan.T", ""].map { reader.partition(homeAccountID: $0) }))

                func union<E: CacheEntity>(_ type: E.Type) throws -> [String] {
                    var visited: [String] = []
                    for partition in partitions {
                        try reader.forEach(E.self, in: partition) { result in
                            let stored = try result.get()
                            #expect(reader.partition(of: stored) == partition)
                            visited.append(stored.fingerprint)
                            reader.releaseScannedPages()
                            return true
                        }
                    }
                    return visited
                }
                func all<E: CacheEntity>(_ type: E.Type) throws -> [String] { try reader.list(E.self).records.map(\.fingerprint) }
                for (visited, listed) in [
                    (try union(Account.self), try all(Account.self)), (try union(AccessToken.self), try all(AccessToken.self)),
                    (try union(RefreshToken.self), try all(RefreshToken.self)), (try union(IDToken.self), try all(IDToken.self)),
                ] {
                    #expect(visited.count == listed.count && Set(visited) == Set(listed))
                }
                // App metadata belongs to no partition.
                #expect(try union(AppMetadata.self).isEmpty)
                let metadata = try #require(try reader.list(AppMetadata.self).records.first)
                #expect(reader.partition(of: metadata) == nil)
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func walksStopWhenAskedAndFiltersStillApply(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try Self.populate(cache)
            try cache.read { reader in
                var seen = 0
                try reader.forEachPartition { _ in seen += 1; return seen < 2 }
                #expect(seen == 2)
                var tokens = 0
                try reader.forEach(AccessToken.self) { _ in tokens += 1; return tokens < 3 }
                #expect(tokens == 3)
                // A client filter within a partition; a home-account filter naming another partition visits nothing.
                let a = reader.partition(homeAccountID: "a.t")
                var clients: [String] = []
                try reader.forEach(AccessToken.self, in: a, filter: RecordFilter(clientID: "C2")) { clients.append(try $0.get().entity.clientID); return true }
                #expect(clients == ["c2"])
                var none = 0
                try reader.forEach(AccessToken.self, in: a, filter: RecordFilter(homeAccountID: "b.t")) { _ in none += 1; return true }
                #expect(none == 0)
            }
        }
    }

    @Test func theSuccessorOfAPrefixFollowsEveryKeyStartingWithIt() {
        #expect(CacheReader.successor(of: [0x00, 0x01]) == [0x00, 0x02])
        #expect(CacheReader.successor(of: [0x00, 0xFF]) == [0x01, 0x00])
        #expect(CacheReader.successor(of: [0xFF, 0xFF]) == nil)
        let prefix: [UInt8] = [0x12, 0xFF, 0xFF]
        let next = CacheReader.successor(of: prefix)!
        #expect(prefix.lexicographicallyPrecedes(next) && (prefix + [0xFF, 0xFF]).lexicographicallyPrecedes(next))
    }
}
