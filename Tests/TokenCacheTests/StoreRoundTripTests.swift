import Foundation
import TestSupport
import Testing

@testable import TokenCache

@Suite struct StoreRoundTripTests {
    @Test(arguments: TestBackend.allCases)
    func everyEntityRoundTripsWithEveryFieldAndUnknownFields(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            // Every modelled field set, an on-behalf-of partition too (part of the key: `get` finds them by it).
            let accessToken = Samples.accessToken(partition: "obo-hash")
            let refreshToken = Samples.refreshToken(partition: "obo")
            let idToken = Samples.idToken()
            let account = Samples.account()
            let metadata = Samples.appMetadata()
            try cache.write { writer in
                try writer.put(accessToken)
                try writer.put(refreshToken)
                try writer.put(idToken)
                try writer.put(account)
                try writer.put(metadata)
            }
            #expect(try cache.get(accessToken.key)?.entity == accessToken)
            #expect(try cache.get(refreshToken.key)?.entity == refreshToken)
            #expect(try cache.get(idToken.key)?.entity == idToken)
            #expect(try cache.get(account.key)?.entity == account)
            #expect(try cache.get(metadata.key)?.entity == metadata)
            // Field-by-field, since Secret equality alone could hide a wrong token.
            let stored = try #require(try cache.get(accessToken.key)).entity
            #expect(stored.secret.reveal() == "at-secret")
            #expect(stored.additionalFields == Samples.extras)
            #expect(stored.refreshOn == Samples.now + 1800)
            #expect(stored.userAssertionHash == "obo-hash")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func recordsOfMoreThan64FieldsKeepEveryUnknownField(backend: TestBackend) throws {
        // The decoder tracks taken fields in a 64-bit set and an overflow array past 64. The unknown names sort first, so
        // with enough of them every modelled field sits past index 64: both sides of the boundary.
        try TestStore.with(backend) { _, cache in
            for extra in [50, 53, 54, 80] {
                var token = Samples.accessToken(target: "scope-\(extra)")
                token.additionalFields = Dictionary(uniqueKeysWithValues: (0..<extra).map { ("a_field_\($0)", JSONValue.integer(Int64($0))) })
                token.additionalFields["zz_last"] = .string("kept")
                try cache.put(token)
                let stored = try #require(try cache.get(token.key)).entity
                #expect(stored == token)
                #expect(stored.additionalFields.count == extra + 1)
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func optionalFieldsStayAbsent(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let token = AccessToken(
                homeAccountID: "", environment: "login.microsoftonline.com", clientID: "app", realm: "t", target: "api://x/.default",
                secret: Secret("s"), cachedAt: 1, expiresOn: 2
            )
            try cache.put(token)
            let stored = try #require(try cache.get(token.key)).entity
            #expect(stored == token)
            #expect(stored.tokenType == nil && stored.refreshOn == nil && stored.additionalFields.isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func keysMatchCaseInsensitivelyAndScopesAsASet(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let token = Samples.accessToken(target: "User.Read Mail.Read")
            try cache.put(token)
            var key = token.key
            key.homeAccountID = key.homeAccountID.uppercased()
            key.environment = "LOGIN.microsoftonline.COM"
            key.target = "  mail.read\tUSER.READ user.read "
            key.tokenType = "bearer"
            #expect(try cache.get(key)?.entity == token)
            key.target = "mail.read"
            #expect(try cache.get(key) == nil)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func absentTokenTypeIsBearer(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            var token = Samples.accessToken()
            token.tokenType = nil
            try cache.put(token)
            var key = token.key
            key.tokenType = "Bearer"
            #expect(try cache.get(key) != nil)
            key.tokenType = "pop"
            #expect(try cache.get(key) == nil)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func putReplacesTheRecordWithTheSameKeyAndBumpsTheRevision(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            var token = Samples.refreshToken()
            let created = try cache.put(token)
            #expect(backend.isFirst(created))
            token.secret = Secret("rotated")
            #expect(try cache.put(token) == created + 1)
            let stored = try #require(try cache.get(token.key))
            #expect(stored.revision == created + 1)
            #expect(stored.entity.secret.reveal() == "rotated")
            #expect(try cache.list(RefreshToken.self).records.count == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func deleteRemovesOnlyThatRecord(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let first = Samples.idToken(realm: "r1")
            let second = Samples.idToken(realm: "r2")
            try cache.write { try $0.put(first); try $0.put(second) }
            #expect(try cache.delete(first.key))
            #expect(try cache.delete(first.key) == false)
            #expect(try cache.get(first.key) == nil)
            #expect(try cache.get(second.key) != nil)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func listsByAccountByClientAndAll(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.write { writer in
                try writer.put(Samples.accessToken(home: "a.t", client: "c1", target: "s1"))
                try writer.put(Samples.accessToken(home: "a.t", client: "c2", target: "s1"))
                try writer.put(Samples.accessToken(home: "b.t", client: "c1", target: "s1"))
                try writer.put(Samples.accessToken(home: "b.t", client: "c1", target: "s2"))
                try writer.put(Samples.appMetadata(client: "c1"))
                try writer.put(Samples.appMetadata(client: "c2"))
            }
            #expect(try cache.list(AccessToken.self).records.count == 4)
            let byAccount = try cache.list(AccessToken.self, filter: RecordFilter(homeAccountID: "A.T")).records
            #expect(byAccount.map(\.entity.homeAccountID) == ["a.t", "a.t"])
            let byClient = try cache.list(AccessToken.self, filter: RecordFilter(clientID: "C1")).records
            #expect(byClient.count == 3 && byClient.allSatisfy { $0.entity.clientID == "c1" })
            let both = try cache.list(AccessToken.self, filter: RecordFilter(homeAccountID: "b.t", clientID: "c1")).records
            #expect(both.count == 2)
            #expect(try cache.list(AppMetadata.self, filter: RecordFilter(clientID: "c2")).records.map(\.entity.clientID) == ["c2"])
            let snapshot = try cache.snapshot(filter: RecordFilter(homeAccountID: "a.t"))
            #expect(snapshot.accessTokens.count == 2 && snapshot.corrupt.isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func familyAndClientRefreshTokensAreDistinctRecords(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let family = Samples.refreshToken(family: "1", secret: "family")
            let own = Samples.refreshToken(family: nil, secret: "own")
            try cache.write { try $0.put(family); try $0.put(own) }
            #expect(try cache.get(RefreshToken.Key(homeAccountID: Samples.home, environment: Samples.environment, owner: .family("1")))?.entity.secret.reveal() == "family")
            #expect(try cache.get(RefreshToken.Key(homeAccountID: Samples.home, environment: Samples.environment, owner: .client(Samples.client)))?.entity.secret.reveal() == "own")
        }
    }

    @Test func reopeningTheStoreSeesCommittedData() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            do {
                let cache = try TokenStore.create(store.configuration)
                try cache.put(Samples.account())
            }
            let reopened = try TokenStore.open(store.configuration)
            #expect(try reopened.get(Samples.account().key)?.entity == Samples.account())
            #expect(try reopened.info().recordCounts[.account] == 1)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func invalidEntitiesAreRejectedAndNothingIsWritten(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            var bad = Samples.accessToken(target: "User.Read Mail.Réad")
            #expect(errorCode { try cache.put(bad) } == .invalidArgument)
            bad = Samples.accessToken()
            bad.additionalFields["secret"] = .string("shadow")
            let error = try #require(throws: TokenCacheError.self) { try cache.put(bad) }
            #expect(error.code == .invalidArgument)
            bad = Samples.accessToken(secret: "")
            #expect(errorCode { try cache.put(bad) } == .invalidArgument)
            let total = try cache.info().recordCounts.values.reduce(0, +)
            #expect(total == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func oversizedRecordsAreRejectedWithRecordTooLarge(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let huge = Samples.idToken(secret: String(repeating: "~", count: 300_000))  // not base64url: kept as text
            let error = try #require(throws: TokenCacheError.self) { try cache.put(huge) }
            #expect(error.code == .recordTooLarge)
            // A 1 MB scope string is fine for the key (hashed to fixed size) but too large for the record.
            let scopes = (0..<60_000).map { "scope\($0)" }.joined(separator: " ")
            let wide = Samples.accessToken(target: scopes)
            #expect(errorCode { try cache.put(wide) } == .recordTooLarge)
        }
    }
}
