import Foundation
import TestSupport
import Testing
import TokenCacheRecords
import TokenCacheSodium
import TokenCacheStorage

@testable import TokenCache
@testable import TokenCacheOperations

/// The upgrade to format version 4 (FORMAT.md §7): stores of version 3 hold bodies and summaries of schema 1. They read
/// as they are; a store in a directory has every record re-sealed in schema 2 by its first writable open; a shared
/// store keeps its records until they are rewritten or re-sealed.
@Suite struct BodySchemaUpgradeTests {
    static let sealedSpaces: [KeySpace] = [.accessTokens, .refreshTokens, .idTokens, .accounts, .appMetadata, .meta]

    /// Rewrites every sealed record of the store as format version 3 wrote it (body and summary of schema 1, with
    /// `credential_type`), under the same keys, and marks the header version 3.
    static func downgradeToVersion3(_ store: TestStore, _ cache: TokenStore) throws {
        let keyring = cache.store.keyring
        for space in sealedSpaces {
            for (key, value) in try store.rawEntries(space) {
                guard let keyID = value.withUnsafeBytes({ RecordEnvelope.keyID(of: $0) }) else { continue }  // plaintext cursors
                let slot = RecordSlot(storeID: keyring.storeID, database: space.name, key: key)
                let (summary, body) = try value.withUnsafeBytes { value in
                    (try RecordEnvelope.open(.summary, of: value, slot: slot, keys: keyring.recordKey),
                     try #require(try RecordEnvelope.open(.body, of: value, slot: slot, keys: keyring.recordKey)))
                }
                var decoded = try body.withUnsafeBytes { try RecordBody.decode($0) }
                if let type = EntityKind(space)?.credentialType { decoded.fields["credential_type"] = .string(type) }
                let schema1Body = [FieldType.namedSchema] + withUnsafeBytes(of: decoded.revision.bigEndian, Array.init)
                    + withUnsafeBytes(of: decoded.updatedAt.bigEndian, Array.init) + encoded(decoded.fields)
                let schema1Summary = try summary.map { summary in
                    try summary.withUnsafeBytes { bytes in
                        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[1...]))
                        return encoded(try FieldMap.decode(&reader, schema: FieldType.compactSchema))
                    }
                }
                var sealed = [UInt8](repeating: 0, count: RecordEnvelope.sealedCount(summaryPlaintext: schema1Summary?.count, bodyPlaintext: schema1Body.count))
                try sealed.withUnsafeMutableBytes { output in
                    try schema1Body.withUnsafeBytes { body in
                        if let schema1Summary {
                            try schema1Summary.withUnsafeBytes { summary in
                                try RecordEnvelope.seal(summary: summary, body: body, slot: slot, keyID: keyID, key: keyring.recordKey(keyID)!, into: output)
                            }
                        } else {
                            try RecordEnvelope.seal(summary: nil, body: body, slot: slot, keyID: keyID, key: keyring.recordKey(keyID)!, into: output)
                        }
                    }
                }
                try store.rawPut(space, key: key, value: sealed)
            }
        }
        try AccessTokenPlacementTests.setHeaderVersion(3, store, cache)
    }

    /// The schemas of the stored bodies and summaries: (body schema, summary schema or nil) → count.
    static func schemas(_ store: TestStore, _ cache: TokenStore) throws -> [String: Int] {
        let keyring = try store.openReadOnly().store.keyring
        var counts: [String: Int] = [:]
        for space in sealedSpaces {
            for (key, value) in try store.rawEntries(space) where value.withUnsafeBytes({ RecordEnvelope.keyID(of: $0) }) != nil {
                let slot = RecordSlot(storeID: keyring.storeID, database: space.name, key: key)
                let (summary, body) = try value.withUnsafeBytes { value in
                    (try RecordEnvelope.open(.summary, of: value, slot: slot, keys: keyring.recordKey),
                     try #require(try RecordEnvelope.open(.body, of: value, slot: slot, keys: keyring.recordKey)))
                }
                let label = "body \(body.withUnsafeBytes { $0[0] })" + (summary.map { s in ", summary \(s.withUnsafeBytes { $0[0] })" } ?? "")
                counts[label, default: 0] += 1
            }
        }
        return counts
    }

    static let lookup = SilentLookupQuery(
        clientID: Samples.client, homeAccountID: "u3.utid", environment: Samples.environment, realm: "utid1", scopes: ["User.Read"],
        now: Samples.now
    )

    /// A store in a directory: read-only, version 3 reads its schema-1 records as they are; the first writable open
    /// makes it version 4 and re-seals every record in schema 2, each smaller and read the same.
    @Test func aVersion3StoreIsReadAsItIsAndResealedInSchema2ByItsFirstWritableOpen() throws {
        try TestStore.with { store, cache in
            try DataKeyRotationTests.populate(cache)
            let before = try DataKeyRotationTests.contents(store.configuration)
            let schema2Bytes = try store.rawEntries(.accessTokens).reduce(0) { $0 + $1.1.count }
            try Self.downgradeToVersion3(store, cache)
            #expect(try Self.schemas(store, cache) == ["body 1, summary 0": 30, "body 1": 35])
            let schema1Bytes = try store.rawEntries(.accessTokens).reduce(0) { $0 + $1.1.count }
            #expect(schema1Bytes > schema2Bytes + 30 * 100, "schema 1 \(schema1Bytes) bytes, schema 2 \(schema2Bytes)")

            let old = try store.openReadOnly()
            #expect(try old.info().readVersion == 3)
            DataKeyRotationTests.expectSame(try DataKeyRotationTests.contents(store.configuration), before)
            #expect(try old.silentLookup(Self.lookup).accessToken?.entity.secret.reveal() == "at-3")

            let upgraded = try TokenStore.open(store.configuration)
            #expect(try upgraded.info().readVersion == 4)
            let report = try upgraded.verify()
            #expect(report.isClean && !report.dataKeyRotationPending && report.recordsByDataKey == [2: 65])
            #expect(try Self.schemas(store, cache) == ["body 2, summary 2": 30, "body 2": 35])
            #expect(try store.rawEntries(.accessTokens).reduce(0) { $0 + $1.1.count } == schema2Bytes)
            DataKeyRotationTests.expectSame(try DataKeyRotationTests.contents(store.configuration), before)
            #expect(try upgraded.silentLookup(Self.lookup).accessToken?.entity.secret.reveal() == "at-3")
        }
    }

    /// A shared store (several hosts, maybe some still on the old build until they are replaced): the header becomes
    /// version 4, its records stay schema 1 and read the same; a rewritten record, and every record after a data-key
    /// rotation, is schema 2.
    @Test func aSharedStoreKeepsItsRecordsUntilTheyAreRewrittenOrResealed() throws {
        guard TestBackend.allCases.contains(.postgresql) else { return }
        try TestStore.with(.postgresql) { store, cache in
            try DataKeyRotationTests.populate(cache)
            let before = try DataKeyRotationTests.contents(store.configuration)
            try Self.downgradeToVersion3(store, cache)

            let upgraded = try TokenStore.open(store.configuration)
            #expect(try upgraded.info().readVersion == 4)
            #expect(try Self.schemas(store, cache) == ["body 1, summary 0": 30, "body 1": 35])
            DataKeyRotationTests.expectSame(try DataKeyRotationTests.contents(store.configuration), before)
            #expect(try upgraded.silentLookup(Self.lookup).accessToken?.entity.secret.reveal() == "at-3")

            try upgraded.put(Samples.accessToken(home: "u3.utid", secret: "at-3 again"))
            #expect(try Self.schemas(store, cache) == ["body 1, summary 0": 29, "body 2, summary 2": 1, "body 1": 35])
            #expect(try upgraded.silentLookup(Self.lookup).accessToken?.entity.secret.reveal() == "at-3 again")

            _ = try upgraded.rotateDataKey()
            #expect(try Self.schemas(store, cache) == ["body 2, summary 2": 30, "body 2": 35])
            #expect(try upgraded.silentLookup(Self.lookup).accessToken?.entity.secret.reveal() == "at-3 again")
        }
    }
}

extension EntityKind {
    init?(_ space: KeySpace) {
        switch space {
        case .accessTokens: self = .accessToken
        case .refreshTokens: self = .refreshToken
        case .idTokens: self = .idToken
        case .accounts: self = .account
        case .appMetadata: self = .appMetadata
        default: return nil
        }
    }

    /// The `credential_type` a body of schema 1 holds (FORMAT.md §5.3), for the credential kinds.
    var credentialType: String? {
        switch self {
        case .accessToken, .refreshToken, .idToken: rawValue
        default: nil
        }
    }
}
