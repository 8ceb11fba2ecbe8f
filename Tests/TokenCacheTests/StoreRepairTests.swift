import Foundation
import Testing
import TokenCacheStorage
import TokenCacheRecords

@testable import TokenCache
@testable import TokenCacheOperations

/// `repair` fixes at the level of records what `verify` finds: damaged records removed, misplaced ones moved back
/// (or removed where their key is taken), lone tokens placed; a backup first; every change by fingerprint; nothing
/// readable and well placed is touched.
@Suite struct StoreRepairTests {
    typealias Placement = AccessTokenPlacementTests

    static func rawMove(_ cache: TokenStore, _ database: KeySpace, from: [UInt8], to: [UInt8]) throws {
        let moved = try cache.store.backend.write { txn in try cache.store.move(database, from: from, to: to, in: txn) }
        #expect(moved)
    }

    static func flipLastByte(_ store: TestStore, _ database: KeySpace, key: [UInt8]) throws {
        var value = try #require(try store.rawEntries(database).first { $0.0 == key }?.1)
        value[value.count - 1] ^= 0x01
        try store.rawPut(database, key: key, value: value)
    }

    @Test func aCleanStoreIsLeftAloneAndNoBackupIsTaken() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.accessToken())
            let backup = store.root + "/backup"
            let report = try cache.repair(backupTo: backup)
            #expect(report.changes.isEmpty && report.backupDirectory == nil && report.loneTokensPlaced == 0)
            #expect(!FileManager.default.fileExists(atPath: backup))
        }
    }

    @Test func removesTheDamagedMovesTheMisplacedPlacesTheLoneAndBacksUpFirst() throws {
        try TestStore.with { store, cache in
            let index = cache.store.keyring.index
            // Intact records that must come through untouched.
            let keep = (0..<20).map { Samples.accessToken(home: "keep-\($0).utid", secret: "keep-\($0)") }
            for token in keep { try cache.put(token) }
            // 1. A damaged access token and a damaged account.
            let damagedToken = Samples.accessToken(home: "damaged.utid", secret: "damaged")
            try cache.put(damagedToken)
            try Self.flipLastByte(store, KeySpace.accessTokens, key: Placement.prefix(cache, damagedToken))
            let account = Samples.account(home: "damaged.utid")
            try cache.put(account)
            try Self.flipLastByte(store, KeySpace.accounts, key: Account.storageKey(for: account.key, index: index))
            // 2. A refresh token sealed under a wrong key whose own key is free: moved back.
            let wanderer = Samples.refreshToken(home: "wander.utid", secret: "wanderer")
            try cache.put(wanderer)
            let wandererKey = RefreshToken.storageKey(for: wanderer.key, index: index)
            let wrongKey = [UInt8](repeating: 0x42, count: wandererKey.count)
            try Self.rawMove(cache, KeySpace.refreshTokens, from: wandererKey, to: wrongKey)
            // 3. A stale copy under a wrong key whose own key holds a newer record: removed.
            let stale = Samples.refreshToken(home: "stale.utid", secret: "stale-old")
            try cache.put(stale)
            let staleKey = RefreshToken.storageKey(for: stale.key, index: index)
            let staleWrongKey = [UInt8](repeating: 0x43, count: staleKey.count)
            try Self.rawMove(cache, KeySpace.refreshTokens, from: staleKey, to: staleWrongKey)
            try cache.put(Samples.refreshToken(home: "stale.utid", secret: "stale-new"))
            // 4. A token under its bucket prefix beside another of its bucket: back under its entry key.
            let pairA = Samples.accessToken(home: "pair.utid", target: "A.Read", secret: "pair-a")
            let pairB = Samples.accessToken(home: "pair.utid", target: "B.Read", secret: "pair-b")
            try cache.put(pairA)
            try cache.put(pairB)
            try Self.rawMove(cache, KeySpace.accessTokens, from: Placement.entryKey(cache, pairA), to: Placement.prefix(cache, pairA))
            // 5. Two lone tokens under their entry keys: placed.
            for token in keep.prefix(2) {
                try Self.rawMove(cache, KeySpace.accessTokens, from: Placement.prefix(cache, token), to: Placement.entryKey(cache, token))
            }
            // 6. A damaged cap record.
            try cache.setAccessTokenCap(1_000)
            try Self.flipLastByte(store, KeySpace.meta, key: RecordStore.accessTokenCapKey)

            let before = try cache.verify()
            #expect(before.corrupt.count == 2 && before.misplaced.count == 3 && before.loneTokensUnderEntryKey == 2 && before.damagedMetaRecords.count == 1)
            let fingerprints = Dictionary(uniqueKeysWithValues: (before.corrupt + before.misplaced).map { ($0.fingerprint, $0.kind) })

            let backup = store.root + "/backup"
            let report = try cache.repair(backupTo: backup)
            #expect(report.backupDirectory == backup && report.skipped == 0 && report.loneTokensPlaced == 2)
            let moved = Set(report.changes.filter { $0.action == .moved }.map(\.fingerprint))
            let removed = Set(report.changes.filter { $0.action == .removed }.map(\.fingerprint))
            #expect(moved.count == 2 && removed.count == 4)
            #expect(moved.union(removed).isSuperset(of: fingerprints.keys))
            #expect(report.changes.contains { $0.record == "access-token-cap" && $0.action == .removed })

            let after = try cache.verify()
            #expect(after.isClean && after.loneTokensUnderEntryKey == 0)
            for token in keep { #expect(try cache.get(token.key)?.entity.secret.reveal() == token.secret.reveal()) }
            #expect(try cache.get(wanderer.key)?.entity.secret.reveal() == "wanderer")
            #expect(try cache.get(stale.key)?.entity.secret.reveal() == "stale-new")
            #expect(try cache.get(pairA.key)?.entity.secret.reveal() == "pair-a" && cache.get(pairB.key) != nil)
            #expect(try cache.get(damagedToken.key) == nil && cache.accessTokenCap() == nil)
            #expect(report.changes.allSatisfy { change in !Canary.all.contains { change.description.contains($0) } })

            // The backup is the store as it was, damage included: the same key opens it.
            let copy = try TokenStore.open(Configuration(directory: backup, keySource: .keyFile(path: store.keyFile)))
            let copied = try copy.verify()
            #expect(copied.corrupt.count == 2 && copied.misplaced.count == 3)
        }
    }

    /// A record another process rewrote after the check is left as it now is.
    @Test func aRecordThatChangedSinceTheCheckIsSkipped() throws {
        try TestStore.with { store, cache in
            let token = Samples.refreshToken(secret: "first")
            try cache.put(token)
            try Self.flipLastByte(store, KeySpace.refreshTokens, key: RefreshToken.storageKey(for: token.key, index: cache.store.keyring.index))
            var findings: [RecordFinding] = []
            try cache.read { reader in try reader.forEachFinding(checked: nil, verified: { _, _ in }) { findings.append($0) } }
            #expect(findings.count == 1)
            try cache.put(Samples.refreshToken(secret: "healed"))  // an unconditional write replaces a damaged record
            let (changes, skipped) = try cache.removing { try $0.repair(findings[...]) }
            #expect(changes.isEmpty && skipped == 1)
            #expect(try cache.get(token.key)?.entity.secret.reveal() == "healed")
        }
    }

    @Test func withoutABackupDirectoryTheCopyGoesBesideTheStore() throws {
        try TestStore.with { store, cache in
            let token = Samples.accessToken()
            try cache.put(token)
            try Self.flipLastByte(store, KeySpace.accessTokens, key: Placement.prefix(cache, token))
            let report = try cache.repair(backupTo: nil)
            let backup = try #require(report.backupDirectory)
            #expect(backup.hasPrefix(store.directory + ".before-repair-") && backup.count == store.directory.count + ".before-repair-20261124T203000Z".count)
            #expect(try TokenStore.open(Configuration(directory: backup, keySource: .keyFile(path: store.keyFile))).verify().corrupt.count == 1)
            #expect(try cache.verify().isClean)
        }
    }
}
