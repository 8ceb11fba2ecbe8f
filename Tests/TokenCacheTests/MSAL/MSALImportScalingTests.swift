import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

/// An import's cost grows with the file, not with the file times its largest bucket, and what it does inside a
/// write transaction stays bounded. Counted in work (records visited and opened, index positions looked at) per
/// imported entry, which a loaded machine does not change.
@Suite struct MSALImportScalingTests {
    /// A file of `count` access tokens of one bucket (one account, client and realm), each for its own scope;
    /// with `shared`, every token also holds that scope, so that all of them intersect.
    static func oneBucket(_ count: Int, shared: String? = nil, cachedAt: Int64 = 1_700_000_000) -> [UInt8] {
        var text = "{\"AccessToken\": {"
        for index in 0..<count {
            if index > 0 { text += ", " }
            let target = "api://scaling/scope.\(index)" + (shared.map { " " + $0 } ?? "")
            text += "\"at-\(index)\": " + MSALStoreImportTests.token(target, secret: "s\(index)", cachedAt: cachedAt)
        }
        return Array((text + "}}").utf8)
    }

    /// Work per entry of importing a one-bucket file of `count` tokens into a store whose bucket already holds
    /// `count` older tokens, each of which one imported token supersedes (its scopes and one more): every imported
    /// token meets the stored ones, so the bucket is read and judged, not just written to.
    static func workPerEntry(_ count: Int, backend: TestBackend = .lmdb) throws -> (perEntry: Double, report: MSALImportReport) {
        try TestStore.with(backend) { _, cache in
            try cache.write { writer in
                for index in 0..<count {
                    try writer.put(
                        AccessToken(
                            homeAccountID: "uid.utid", environment: "login.microsoftonline.com", clientID: "client-1", realm: "tenant-1",
                            target: "api://scaling/scope.\(index)", secret: Secret("old\(index)"), cachedAt: 1_600_000_000,
                            expiresOn: 1_900_000_000))
                }
            }
            let report = try cache.importMSAL(from: .bytes(oneBucket(count, shared: "api://scaling/extra")))
            #expect(report.written[.accessToken] == count)
            #expect(report.accessTokensSuperseded == count)
            let work = report.work
            return (Double(work.bucketRecordsVisited + work.recordsOpened + work.indexSteps) / Double(count), report)
        }
    }

    @Test func theWorkPerEntryOfOneBucketIsFlatFrom1kTo16k() throws {
        let backend = TestBackend.lmdb
        let small = try Self.workPerEntry(1_000, backend: backend)
        let large = try Self.workPerEntry(16_000, backend: backend)
        print("import work per entry, one bucket of stored tokens superseded (\(backend)): 1k \(small.perEntry), 16k \(large.perEntry)")
        // The bucket is read once (nothing else writes between the batches): one visit and one opening per stored
        // token, and a few index positions per imported one; LMDB reads it again after a transaction that had to
        // grow the map ran twice. Before, every token read the whole bucket again (8,000 per entry at 16k).
        #expect(large.report.work.recordsOpened <= 2 * 16_000)
        #expect(large.perEntry <= small.perEntry * 2, "\(small.perEntry) per entry at 1k, \(large.perEntry) at 16k")
        #expect(large.perEntry < 8, "\(large.report.work)")
    }

    /// No transaction applies more than ``MSALImportOptions/maximumEntriesPerTransaction`` entries: a larger batch
    /// is refused, and so is a replacing import (one transaction) of a larger file, before anything is written.
    @Test func noTransactionAppliesMoreThanTheLimit() throws {
        try TestStore.with { _, cache in
            let limit = MSALImportOptions.maximumEntriesPerTransaction
            let small = Self.oneBucket(2)
            let batch = #expect(throws: TokenCacheError.self) {
                try cache.importMSAL(from: .bytes(small), options: MSALImportOptions(batchSize: limit + 1))
            }
            #expect(batch?.message.contains("\(limit)") == true)
            var text = "{\"AppMetadata\": {"
            for index in 0...limit {
                text += (index > 0 ? ", " : "") + "\"m\(index)\": {\"client_id\": \"c\(index)\", \"environment\": \"login.microsoftonline.com\"}"
            }
            let replace = #expect(throws: TokenCacheError.self) {
                try cache.importMSAL(from: .bytes(Array((text + "}}").utf8)), options: MSALImportOptions(mode: .replace))
            }
            #expect(replace?.message.contains("\(limit + 1) entries, more than the \(limit)") == true, "\(replace?.message ?? "")")
            let stored = try cache.read { try $0.snapshot() }
            #expect(stored.appMetadata.isEmpty)
        }
    }

    /// A token another process stores between two batches is met by the next batch: the indexes of the buckets
    /// are read again, not trusted from before that commit.
    @Test(arguments: TestBackend.allCases)
    func aTokenStoredBetweenTwoBatchesIsMet(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let file = MSALStoreImportTests.accessTokens([
                MSALStoreImportTests.token("scope.a", secret: "A", cachedAt: 100), MSALStoreImportTests.token("scope.b", secret: "B", cachedAt: 100),
            ])
            var interposed = false
            let report = try cache.importMSAL(from: .bytes(file), options: MSALImportOptions(batchSize: 1)) { progress in
                guard progress.entriesDone == 1, !interposed else { return }
                interposed = true
                _ = try? cache.write { writer in
                    try writer.put(
                        AccessToken(
                            homeAccountID: "uid.utid", environment: "login.microsoftonline.com", clientID: "client-1", realm: "tenant-1",
                            target: "scope.b scope.c", secret: Secret("C"), cachedAt: 200, expiresOn: 1_900_000_000))
                }
            }
            #expect(interposed)
            #expect(report.written[.accessToken] == 1)
            #expect(report.keptExisting[.accessToken] == 1)
            let secrets = try cache.read { try $0.snapshot() }.accessTokens.map { $0.entity.secret.reveal() }.sorted()
            #expect(secrets == ["A", "C"])
        }
    }

    /// The import rule as it was written before the index: each imported token compared with every stored token of
    /// its bucket, those this import wrote left out unless of its own identity. The store's access tokens after an
    /// import must be exactly these, whatever the batches.
    struct ReferenceImport {
        struct Token: Equatable {
            var environment: String, scopes: ScopeSet, stamp: ImportMerge.Stamp, secret: String, imported: Bool
            var identity: String { environment + "|" + scopes.canonical }
        }
        var tokens: [Token]
        var superseded = 0

        mutating func add(_ new: Token, aliases: EnvironmentAliases) {
            var doomed: [Int] = []
            var newer = false
            var superseding = 0
            for (position, stored) in tokens.enumerated() {
                let same = stored.identity == new.identity
                guard same || (aliases.areAliases(stored.environment, new.environment)
                    && IntersectDelete.evicts(newTarget: new.scopes, storedTarget: stored.scopes))
                else { continue }
                if !same && stored.imported { continue }
                if ImportMerge.incomingWins(existing: stored.stamp, incoming: new.stamp) {
                    doomed.append(position)
                    if !same { superseding += 1 }
                } else {
                    newer = true
                }
            }
            guard !newer else { return }
            superseded += superseding
            for position in doomed.reversed() { tokens.remove(at: position) }
            tokens.append(new)
        }
    }

    @Test(arguments: 0..<64)
    func theIndexGivesTheVerdictsOfComparingWithTheWholeBucket(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed) &+ 1)
        let environments = ["login.microsoftonline.com", "login.windows.net", "login.microsoftonline.us"]
        let scopes = ["a", "b", "c", "d", "openid", "profile"]
        func randomToken(_ secret: String) throws -> ReferenceImport.Token {
            let target = scopes.filter { _ in Bool.random(using: &random) }.joined(separator: " ")
            let written = Int64.random(in: 1...4, using: &random)
            return ReferenceImport.Token(
                environment: environments.randomElement(using: &random)!, scopes: try ScopeSet(parsing: target.isEmpty ? "a" : target),
                stamp: ImportMerge.Stamp(writtenAt: written, expiresOn: Int64.random(in: 5...6, using: &random)), secret: secret, imported: false)
        }
        var stored: [ReferenceImport.Token] = []
        for index in 0..<Int.random(in: 0...8, using: &random) {
            let token = try randomToken("stored-\(index)")
            if !stored.contains(where: { $0.identity == token.identity }) { stored.append(token) }
        }
        let file = try (0..<Int.random(in: 1...14, using: &random)).map { try randomToken("file-\($0)") }
        let batchSize = Int.random(in: 1...4, using: &random)
        var reference = ReferenceImport(tokens: stored)
        for var token in file {
            token.imported = true
            reference.add(token, aliases: .builtIn)
        }

        try TestStore.with { _, cache in
            try cache.write { writer in
                for token in stored {
                    try writer.put(
                        AccessToken(
                            homeAccountID: "uid.utid", environment: token.environment, clientID: "client-1", realm: "tenant-1",
                            target: token.scopes.canonical, secret: Secret(token.secret), cachedAt: token.stamp.writtenAt!,
                            expiresOn: token.stamp.expiresOn!))
                }
            }
            let entries = file.map { token in
                """
                {"home_account_id": "uid.utid", "environment": "\(token.environment)", "client_id": "client-1", "realm": "tenant-1", \
                "target": "\(token.scopes.canonical)", "secret": "\(token.secret)", \
                "cached_at": "\(token.stamp.writtenAt!)", "expires_on": "\(token.stamp.expiresOn!)", \
                "credential_type": "AccessToken"}
                """
            }
            let report = try cache.importMSAL(from: .bytes(MSALStoreImportTests.accessTokens(entries)), options: MSALImportOptions(batchSize: batchSize))
            let secrets = try cache.read { try $0.snapshot() }.accessTokens.map { $0.entity.secret.reveal() }.sorted()
            #expect(secrets == reference.tokens.map(\.secret).sorted(), "seed \(seed), batches of \(batchSize)")
            #expect(report.accessTokensSuperseded == reference.superseded)
        }
    }
}

