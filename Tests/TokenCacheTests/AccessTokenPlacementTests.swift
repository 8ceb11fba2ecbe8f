import TestSupport
import Testing
import TokenCacheStorage
import TokenCacheLMDB
import TokenCacheSodium

@testable import TokenCache
import TokenCacheRecords

/// Where access tokens sit in their bucket (FORMAT.md §4.3, version 2): a bucket's lone token under the bucket
/// prefix, the tokens of a bucket of two or more under their entry keys. Kept by every writer, relied on by the
/// lookup, checked by `verify`, and established when a version-1 store is upgraded.
@Suite struct AccessTokenPlacementTests {
    static let prefixCount = RecordStore.bucketPrefixCount

    /// The access-token keys as stored, sorted.
    static func storedKeys(_ store: TestStore) throws -> [[UInt8]] {
        try store.rawEntries(KeySpace.accessTokens).map(\.0).sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func entryKey(_ cache: TokenStore, _ token: AccessToken) -> [UInt8] {
        AccessToken.storageKey(for: token.key, index: cache.store.keyring.index)
    }

    static func prefix(_ cache: TokenStore, _ token: AccessToken) -> [UInt8] {
        Array(entryKey(cache, token).prefix(prefixCount))
    }

    /// Turns the store into what a version-1 writer leaves: every token under its entry key, header versions 1. The
    /// store must seal with XChaCha20-Poly1305, the only cipher a version-1 header can name.
    static func downgradeToVersion1(_ store: TestStore, _ cache: TokenStore) throws {
        for (key, value) in try store.rawEntries(KeySpace.accessTokens) where key.count == RecordStore.bucketPrefixCount {
            let entryKey = try #require(value.withUnsafeBytes { cache.store.entryKey(ofTokenAt: key, value: $0) })
            // Straight through LMDB: the header may already differ from the one `cache` opened with.
            try cache.store.backend.write { txn in _ = try cache.store.move(KeySpace.accessTokens, from: key, to: entryKey, in: txn) }
        }
        try setHeaderVersion(1, store, cache)
    }

    /// Rewrites the header with versions `version` (re-wrapping the data keys, whose AD covers the versions).
    static func setHeaderVersion(_ version: UInt16, _ store: TestStore, _ cache: TokenStore) throws {
        var header = cache.store.keyring.header
        header.readVersion = version
        header.writeVersion = version
        let rewrapped = try cache.store.keyring.rewrapped(as: header, root: try KeyFile.read(at: store.keyFile))
        try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: rewrapped.encoded())
    }

    @Test func aLoneTokenLivesUnderItsBucketPrefixAndMovesWhenASecondArrives() throws {
        try TestStore.with { store, cache in
            let first = Samples.accessToken(target: "User.Read", secret: "first")
            let second = Samples.accessToken(target: "Files.Read", secret: "second")
            let otherBucket = Samples.accessToken(client: "other-client", secret: "other")
            try cache.put(first)
            try cache.put(otherBucket)
            #expect(try Self.storedKeys(store) == [Self.prefix(cache, first), Self.prefix(cache, otherBucket)].sorted { $0.lexicographicallyPrecedes($1) })

            // get, conditional put and revisions work on the token under its prefix.
            let stored = try #require(try cache.get(first.key))
            #expect(stored.entity.secret.reveal() == "first" && stored.revision == 1)
            #expect(try cache.put(first, expectedRevision: 1) == 2)
            #expect(errorCode { try cache.put(first, expectedRevision: 1) } == .conflict)

            // A second token in the bucket: both under their entry keys, the moved one keeping revision and content.
            try cache.put(second)
            #expect(try Self.storedKeys(store).contains(Self.entryKey(cache, first)))
            #expect(try Self.storedKeys(store).contains(Self.entryKey(cache, second)))
            #expect(try !Self.storedKeys(store).contains(Self.prefix(cache, first)))
            let moved = try #require(try cache.get(first.key))
            #expect(moved.revision == 2 && moved.entity == stored.entity)

            // Back to one: the remaining token returns under the prefix.
            #expect(try cache.delete(first.key))
            #expect(try Self.storedKeys(store).contains(Self.prefix(cache, second)))
            #expect(try cache.get(first.key) == nil)
            #expect(try cache.get(second.key)?.entity.secret.reveal() == "second")
            #expect(try cache.verify().isClean)

            // Deleting the lone token empties the bucket.
            #expect(try cache.delete(second.key))
            #expect(try Self.storedKeys(store) == [Self.prefix(cache, otherBucket)])
            #expect(try !cache.delete(second.key))
        }
    }

    @Test func ingestReplacingTheLoneTokenKeepsItUnderThePrefixAndSignOutRemovesIt() throws {
        try TestStore.with { store, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "at-1")), context: try Responses.context())
            let keys = try Self.storedKeys(store)
            #expect(keys.count == 1 && keys[0].count == Self.prefixCount)
            // The same scopes again: the intersect-delete removes the old token, the new one takes the prefix.
            let replaced = try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "at-2")), context: try Responses.context())
            #expect(replaced.accessTokensRemoved == 1)
            #expect(try Self.storedKeys(store) == keys)
            let hit = try cache.silentLookup(Responses.query())
            #expect(hit.outcome == .hit && hit.accessToken?.entity.secret.reveal() == "at-2")
            // Other scopes join the bucket: both move to entry keys; the lookup picks by scope.
            try cache.ingest(
                try TokenResponse(json: Responses.json(accessToken: "at-3", scope: "Mail.Read")), context: try Responses.context(scopes: ["Mail.Read"])
            )
            #expect(try Self.storedKeys(store).allSatisfy { $0.count > Self.prefixCount })
            #expect(try cache.silentLookup(Responses.query(scopes: ["Mail.Read"])).accessToken?.entity.secret.reveal() == "at-3")
            #expect(try cache.silentLookup(Responses.query()).accessToken?.entity.secret.reveal() == "at-2")
            #expect(try cache.verify().isClean)

            let removed = try cache.removeAccount(homeAccountID: User.home, clientID: User.client)
            #expect(removed.accessTokens == 2)
            #expect(try Self.storedKeys(store).isEmpty)
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "at-4")), context: try Responses.context())
            #expect(try cache.removeAccount(homeAccountID: User.home, clientID: nil).accessTokens == 1)
            #expect(try Self.storedKeys(store).isEmpty)
        }
    }

    @Test func verifyFlagsATokenUnderThePrefixBesideOthersAndCountsUnplacedLoneTokens() throws {
        try TestStore.with { store, cache in
            let first = Samples.accessToken(target: "User.Read")
            let second = Samples.accessToken(target: "Files.Read")
            try cache.put(first)
            try cache.put(second)
            // What no writer does: a token moved under the prefix while the bucket has another.
            let misplaced = try cache.write { writer in
                try cache.store.move(KeySpace.accessTokens, from: Self.entryKey(cache, first), to: Self.prefix(cache, first), in: writer.writeTransaction)
            }
            #expect(misplaced)
            let report = try cache.verify()
            #expect(report.misplaced.count == 1 && report.misplaced.first?.reason == "stored under its bucket prefix beside other tokens")

            // A lone token under its entry key is valid (an unfinished upgrade), counted, not a problem.
            #expect(try cache.delete(first.key))
            let unplaced = try cache.write { writer in
                try cache.store.move(KeySpace.accessTokens, from: Self.prefix(cache, second), to: Self.entryKey(cache, second), in: writer.writeTransaction)
            }
            #expect(unplaced)
            let relaxed = try cache.verify()
            #expect(relaxed.isClean && relaxed.loneTokensUnderEntryKey == 1)
            #expect(try cache.silentLookup(Self.query(["Files.Read"])).accessToken?.entity.secret.reveal() == "at-secret")
            // The next write to the bucket places it.
            try cache.put(second)
            #expect(try Self.storedKeys(store) == [Self.prefix(cache, second)])
            #expect(try cache.verify().loneTokensUnderEntryKey == 0)
        }
    }

    static func query(_ scopes: [String]) -> SilentLookupQuery {
        SilentLookupQuery(
            clientID: Samples.client, homeAccountID: Samples.home, environment: Samples.environment, realm: "utid1", scopes: scopes,
            now: Samples.now
        )
    }

    @Test func aDamagedLoneTokenIsReportedAndTheBucketStaysUsable() throws {
        try TestStore.with { store, cache in
            let first = Samples.accessToken(target: "User.Read", secret: "first")
            let second = Samples.accessToken(target: "Files.Read", secret: "second")
            try cache.put(first)
            let prefix = Self.prefix(cache, first)
            var damaged = try #require(try store.rawEntries(KeySpace.accessTokens).first?.1)
            damaged[damaged.count - 1] ^= 0x01
            try store.rawPut(KeySpace.accessTokens, key: prefix, value: damaged)

            // The damaged record may be any token of the bucket: reads of one report it, lookups name it.
            #expect(errorCode { try cache.get(second.key) } == .corruptRecord)
            #expect(errorCode { try cache.put(second, expectedRevision: 1) } == .conflict)  // "cannot compare revisions"
            let miss = try cache.silentLookup(Self.query(["User.Read"]))
            #expect(try miss.outcome != .hit && miss.corrupt.count == 1)

            // Another token joins the bucket (under its entry key: the damaged one cannot be moved) and is found.
            try cache.put(second)
            let keys = try Self.storedKeys(store)
            #expect(keys == [prefix, Self.entryKey(cache, second)])
            let hit = try cache.silentLookup(Self.query(["Files.Read"]))
            #expect(try hit.accessToken?.entity.secret.reveal() == "second" && hit.corrupt.count == 1)
            #expect(try cache.verify().corrupt.count == 1)
            // Unconditional writes pass the damaged record over and leave it for repair; nothing else is lost.
            #expect(try !cache.delete(first.key))
            try cache.put(first)
            let again = try cache.silentLookup(Self.query(["User.Read"]))
            #expect(try again.accessToken?.entity.secret.reveal() == "first" && again.corrupt.count == 1)
            #expect(try Self.storedKeys(store).count == 3)
            #expect(try cache.verify().corrupt.count == 1)
        }
    }

    /// A backend that keeps lone tokens under their entry keys (memory) still reads a token found under a bucket prefix
    /// (a store copied from LMDB) and still moves it out when a second token joins its bucket (§4.3's MUST).
    @Test func aStoreThatKeepsEveryTokenUnderItsEntryKeyStillMovesALoneTokenOutWhenASecondArrives() throws {
        try TestStore.with(.memory) { store, cache in
            let first = Samples.accessToken(target: "User.Read", secret: "first")
            try cache.put(first)
            #expect(try Self.storedKeys(store) == [Self.entryKey(cache, first)])
            let moved = try cache.store.backend.write { txn in
                try cache.store.move(KeySpace.accessTokens, from: Self.entryKey(cache, first), to: Self.prefix(cache, first), in: txn)
            }
            #expect(moved)
            #expect(try Self.storedKeys(store) == [Self.prefix(cache, first)])
            #expect(try cache.get(first.key)?.entity.secret.reveal() == "first")
            #expect(try cache.silentLookup(Self.query(["User.Read"])).accessToken?.entity.secret.reveal() == "first")
            let second = Samples.accessToken(target: "Mail.Send", secret: "second")
            try cache.put(second)
            #expect(Set(try Self.storedKeys(store)) == [Self.entryKey(cache, first), Self.entryKey(cache, second)])
            let report = try cache.verify()
            #expect(report.isClean && report.loneTokensUnderEntryKey == 0)
        }
    }

    /// Random puts, conditional puts and deletes over a few buckets, several transactions each: after every one,
    /// each bucket's tokens are where §4.3 puts them, every live token reads back with its revision, and every
    /// removed one is gone.
    @Test(arguments: TestBackend.allCases)
    func placementHoldsThroughRandomWrites(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            var generator = SplitMix64(seed: 0x9A11_0C47)
            let targets = ["User.Read", "Files.Read", "Mail.Send", "Calendars.Read"]
            let clients = [Samples.client, "second-client"]
            var live: [AccessToken.Key: (secret: String, revision: UInt64)] = [:]
            for step in 0..<150 {
                try cache.write { writer in
                    for _ in 0..<(1 + Int(generator.next() % 3)) {
                        let token = Samples.accessToken(
                            client: clients[Int(generator.next() % 2)], target: targets[Int(generator.next() % 4)],
                            secret: "s-\(step)-\(generator.next() % 1000)"
                        )
                        switch generator.next() % 4 {
                        case 0, 1:
                            let revision = try writer.put(token)
                            live[token.key] = (token.secret.reveal(), revision)
                        case 2:
                            guard let current = live[token.key] else { continue }
                            let revision = try writer.put(token, expectedRevision: current.revision)
                            #expect(revision == current.revision + 1)
                            live[token.key] = (token.secret.reveal(), revision)
                        default:
                            #expect(try writer.delete(token.key) == (live[token.key] != nil))
                            live[token.key] = nil
                        }
                    }
                }
                let report = try cache.verify()
                #expect(report.isClean && report.loneTokensUnderEntryKey == 0, "step \(step)")
                #expect(report.verified[.accessToken] ?? 0 == live.count)
                for (key, expected) in live {
                    let stored = try #require(try cache.get(key))
                    #expect(stored.entity.secret.reveal() == expected.secret && stored.revision == expected.revision)
                }
                // LMDB keeps a lone token under its bucket prefix; memory keeps every token under its entry key.
                let lonePlaced = cache.store.placesLoneTokensAtBucketPrefix
                #expect(lonePlaced == (backend == .lmdb))
                let keys = try Self.storedKeys(store)
                let prefixes = Set(keys.map { Array($0.prefix(Self.prefixCount)) })
                for prefix in prefixes {
                    let inBucket = keys.filter { $0.starts(with: prefix) }
                    #expect(
                        inBucket.count == 1 && lonePlaced ? inBucket[0].count == Self.prefixCount : inBucket.allSatisfy { $0.count > Self.prefixCount }
                    )
                }
            }
            #expect(live.count > 0)
        }
    }

    /// A bucket of one token per account (`accounts` of them) and one bucket of two, written by this library.
    static func populate(_ cache: TokenStore, accounts: Int) throws {
        try cache.write { writer in
            for account in 0..<accounts {
                try writer.put(Samples.accessToken(home: "uid-\(account).utid", secret: "lone-\(account)"))
            }
            try writer.put(Samples.accessToken(target: "User.Read", secret: "pair-1"))
            try writer.put(Samples.accessToken(target: "Files.Read", secret: "pair-2"))
        }
    }

    @Test func aVersion1StoreIsReadAsItIsAndUpgradedOnWritableOpen() throws {
        try TestStore.with(cipher: .xchacha20Poly1305) { store, cache in
            try Self.populate(cache, accounts: 20)
            try Self.downgradeToVersion1(store, cache)
            #expect(try Self.storedKeys(store).allSatisfy { $0.count > Self.prefixCount })

            // Read-only: stays version 1, readable.
            let old = try store.openReadOnly()
            #expect(try old.info().readVersion == 1)
            #expect(try old.silentLookup(Self.query(["Files.Read"])).accessToken?.entity.secret.reveal() == "pair-2")
            #expect(try Self.storedKeys(store).allSatisfy { $0.count > Self.prefixCount })

            // Writable: upgraded, lone tokens placed, the placement cursor gone, nothing lost.
            let upgraded = try TokenStore.open(store.configuration)
            #expect(try upgraded.info().readVersion == FormatConstants.readVersion)
            #expect(try upgraded.info().writeVersion == FormatConstants.writeVersion)
            let keys = try Self.storedKeys(store)
            #expect(keys.count == 22 && keys.filter { $0.count == Self.prefixCount }.count == 20)
            #expect(try !store.rawEntries(KeySpace.meta).contains { $0.0 == FormatConstants.placementCursorKey })
            let report = try upgraded.verify()
            #expect(report.isClean && report.loneTokensUnderEntryKey == 0 && report.verified[.accessToken] == 22)
            let lookup = SilentLookupQuery(
                clientID: Samples.client, homeAccountID: "uid-7.utid", environment: Samples.environment, realm: "utid1",
                scopes: ["Mail.Read"], now: Samples.now
            )
            #expect(try upgraded.silentLookup(lookup).accessToken?.entity.secret.reveal() == "lone-7")
        }
    }

    @Test func anInterruptedPlacementIsValidAndResumedByTheNextWritableOpen() throws {
        try TestStore.with(cipher: .xchacha20Poly1305) { store, cache in
            try Self.populate(cache, accounts: 30)
            try Self.downgradeToVersion1(store, cache)
            // What the upgrade's first transaction leaves: version 2 and the cursor, no token moved yet.
            try Self.setHeaderVersion(FormatConstants.readVersion, store, cache)
            try store.rawPut(KeySpace.meta, key: FormatConstants.placementCursorKey, value: [])

            let reader = try store.openReadOnly()
            let report = try reader.verify()
            #expect(report.isClean && report.loneTokensUnderEntryKey == 30)
            #expect(try reader.silentLookup(Self.query(["Files.Read"])).accessToken?.entity.secret.reveal() == "pair-2")

            // Placement in small steps, each resuming at a bucket boundary where the last stopped.
            var start: [UInt8]? = []
            var steps = 0
            while let from = start, steps < 100 {
                start = try cache.store.backend.write { txn in try cache.store.placeLoneTokens(from: from, limit: 7, in: txn) }
                steps += 1
                if let start { #expect(start.count == Self.prefixCount && start.lexicographicallyPrecedes(from) == false) }
            }
            #expect(steps == 5)  // 32 records, 7 per step, bucket boundaries
            #expect(try reader.verify().loneTokensUnderEntryKey == 0)

            // Again from scratch through open: the writable open finishes the placement and drops the cursor.
            try Self.downgradeToVersion1(store, cache)
            try Self.setHeaderVersion(FormatConstants.readVersion, store, cache)
            try store.rawPut(KeySpace.meta, key: FormatConstants.placementCursorKey, value: [])
            let writer = try TokenStore.open(store.configuration)
            #expect(try writer.verify().loneTokensUnderEntryKey == 0)
            #expect(try !store.rawEntries(KeySpace.meta).contains { $0.0 == FormatConstants.placementCursorKey })
        }
    }
}
