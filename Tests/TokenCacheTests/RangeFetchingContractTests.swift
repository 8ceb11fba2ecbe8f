import Foundation
import TestSupport
import Testing
import TokenCachePostgreSQL

@testable import TokenCacheStorage

/// A read plan served in one call, checked on every backend: each range holds exactly what a read transaction finds
/// there, and a count taken only when a record is present is absent otherwise.
@Suite struct RangeFetchingContractTests {
    static let space = RecordBackendContractTests.space
    static let gate = ReadPlan.Record(space: .meta, key: Array("gate".utf8))

    /// The keys of range `index` of `fetched`, in the order it holds them.
    static func keys(_ fetched: FetchedRecords, range index: Int) -> [[UInt8]] {
        var keys: [[UInt8]] = []
        fetched.forEachRecord(ofRange: index) { key, _ in keys.append(Array(key)) }
        return keys
    }

    @Test(arguments: TestBackend.allCases)
    func aPlanHoldsWhatAReadFindsInEachRange(backend kind: TestBackend) async throws {
        try await Self.withBackend(kind) { backend in
            let keys: [[UInt8]] = [[2], [1, 0xFF], [1], [0xFF], [0xFF, 0xFF, 1], [1, 0], [0, 0xFF, 0xFF], [1, 0, 0]]
            for key in keys { try RecordBackendContractTests.put(backend, key, "v\(key)") }
            try RecordBackendContractTests.put(backend, [1, 0], "other space", in: .idTokens)
            var plan = ReadPlan()
            plan.add(Self.space, prefix: [1, 0])  // bounded above by [1, 1]
            plan.add(Self.space, prefix: [0xFF])  // no key above every extension of 0xFF: unbounded
            plan.add(.idTokens, prefix: [])  // a whole key space
            plan.add(Self.space, from: [1, 0, 1], limit: 2)  // a scan
            plan.add(Self.space, from: [0xFF, 0xFF], limit: 5)  // a scan that reaches the end of the space
            plan.add(Self.space, prefix: [3])  // empty
            plan.addCount(of: Self.space)
            plan.addCount(of: .idTokens, onlyIfPresent: Self.gate)
            let expected: [[[UInt8]]] = [[[1, 0], [1, 0, 0]], [[0xFF], [0xFF, 0xFF, 1]], [[1, 0]], [[1, 0xFF], [2]], [[0xFF, 0xFF, 1]], []]
            // Twice each way, so that a backend that keeps the statement between calls is checked on its second use.
            for _ in 0..<2 {
                for fetched in [try backend.fetchSynchronously(plan), try await backend.fetch(plan)] {
                    for (index, keys) in expected.enumerated() { #expect(Self.keys(fetched, range: index) == keys, "range \(index)") }
                    #expect(fetched.count(of: Self.space) == keys.count)
                    #expect(fetched.count(of: .idTokens) == nil, "counted although the record it depends on is absent")
                }
            }
            try RecordBackendContractTests.put(backend, Self.gate.key, "present", in: Self.gate.space)
            for fetched in [try backend.fetchSynchronously(plan), try await backend.fetch(plan)] {
                #expect(fetched.count(of: .idTokens) == 1)
                #expect(fetched.count(of: Self.space) == keys.count)
            }
        }
    }

    /// ``RecordBackendContractTests/withBackend(_:_:)`` for an async body.
    static func withBackend(_ kind: TestBackend, _ body: (any RecordBackend) async throws -> Void) async throws {
        try await withTemporaryDirectoryAsync { root in
            switch kind {
            case .memory:
                try await body(InMemoryRecordBackend(name: "memory"))
            case .postgresql:
                let address = try PostgreSQLAddress(parsing: PostgreSQLTestServer.uniqueStoreURL("fetch")!)
                try await body(try PostgreSQLStorageLocation(address: address, timeout: PostgreSQLTestServer.timeout).open(readOnly: false, create: true))
            case .lmdb:
                let options = LMDBRecordBackend.Options(
                    directory: root, initialMapSize: 1 << 20, maximumMapSize: 64 << 20, readOnly: false, allowNetworkFilesystem: false
                )
                try await body(try LMDBRecordBackend.open(options))
            }
        }
    }
}
