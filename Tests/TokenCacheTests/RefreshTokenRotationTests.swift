import Foundation
import TestSupport
import Testing

@testable import TokenCache

/// `replaceRefreshToken` when the rotated token has another owner than the one it replaces: a response that adds
/// `foci` moves the token from the client to the family, one without it moves it back.
@Suite struct RefreshTokenRotationTests {
    static func key(_ owner: RefreshToken.Owner) -> RefreshToken.Key {
        RefreshToken.Key(homeAccountID: User.home, environment: User.cloud, owner: owner)
    }
    static let clientKey = key(.client(User.client))
    static let familyKey = key(.family("1"))

    static func token(_ secret: String, family: String? = nil) -> RefreshToken {
        RefreshToken(
            homeAccountID: User.home, environment: User.cloud, clientID: User.client, secret: Secret(secret),
            familyID: family
        )
    }

    @Test func clientToFamilyReplacesTheClientOwnedToken() throws {
        try TestStore.with { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "rt-1")), context: try Responses.context())
            let redeemed = try #require(try cache.silentLookup(Responses.query()).refreshToken)
            #expect(redeemed.entity.owner == .client(User.client))

            let revision = try cache.replaceRefreshToken(Self.token("rt-2", family: "1"), expectedSecret: redeemed.entity.secret)
            #expect(revision == 1)
            #expect(try cache.get(Self.familyKey)?.entity.secret.reveal() == "rt-2")
            // The redeemed client-owned token is gone: it was superseded, and left in place it would let a second
            // rotation of the same token succeed too.
            #expect(try cache.get(Self.clientKey) == nil)

            // Another process that redeemed the same token loses, whatever owner its successor has.
            for family in ["1", nil] {
                let late = try #require(throws: TokenCacheError.self) {
                    try cache.replaceRefreshToken(Self.token("rt-late", family: family), expectedSecret: Secret("rt-1"))
                }
                #expect(late.code == .conflict)
            }
            #expect(try cache.get(Self.familyKey)?.entity.secret.reveal() == "rt-2")
            #expect(try cache.get(Self.clientKey) == nil)
        }
    }

    @Test func clientToFamilyOverAnotherMembersFamilyTokenContinuesItsRevision() throws {
        try TestStore.with { _, cache in
            try cache.put(Self.token("family-of-another-member", family: "1"))
            try cache.put(Self.token("rt-1"))
            let revision = try cache.replaceRefreshToken(Self.token("rt-2", family: "1"), expectedSecret: Secret("rt-1"))
            #expect(revision == 2)
            #expect(try cache.get(Self.familyKey)?.entity.secret.reveal() == "rt-2")
            #expect(try cache.get(Self.clientKey) == nil)
        }
    }

    @Test func aRotationByAnotherWriterIsAConflictAcrossOwners() throws {
        try TestStore.with { _, cache in
            try cache.put(Self.token("rt-1"))
            try cache.put(Self.token("rt-1b"))  // another process rotated it meanwhile
            let lost = try #require(throws: TokenCacheError.self) {
                try cache.replaceRefreshToken(Self.token("rt-2", family: "1"), expectedSecret: Secret("rt-1"))
            }
            #expect(lost.code == .conflict)
            #expect(lost.currentRevision == 2 && lost.recordFingerprint != nil)
            #expect(try cache.get(Self.familyKey) == nil)
            #expect(try cache.get(Self.clientKey)?.entity.secret.reveal() == "rt-1b")
        }
    }

    @Test func familyToClientKeepsTheFamilyTokenForTheOtherMembers() throws {
        try TestStore.with { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "f-1", foci: "1")), context: try Responses.context())
            let redeemed = try #require(try cache.silentLookup(Responses.query()).refreshToken)
            #expect(redeemed.entity.owner == .family("1"))

            // A wrong expected secret is a conflict, and nothing is written.
            let lost = try #require(throws: TokenCacheError.self) {
                try cache.replaceRefreshToken(Self.token("c-2"), expectedSecret: Secret("f-0"))
            }
            #expect(lost.code == .conflict)
            #expect(try cache.get(Self.clientKey) == nil)

            #expect(try cache.replaceRefreshToken(Self.token("c-2"), expectedSecret: redeemed.entity.secret) == 1)
            #expect(try cache.get(Self.clientKey)?.entity.secret.reveal() == "c-2")
            #expect(try cache.get(Self.familyKey)?.entity.secret.reveal() == "f-1")
        }
    }

    @Test func familyToClientFindsTheFamilyTheAppMetadataNames() throws {
        try TestStore.with { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "f-1", foci: "7")), context: try Responses.context())
            #expect(try cache.replaceRefreshToken(Self.token("c-2"), expectedSecret: Secret("f-1")) == 1)
            #expect(try cache.get(Self.clientKey)?.entity.secret.reveal() == "c-2")
            #expect(try cache.get(Self.key(.family("7")))?.entity.secret.reveal() == "f-1")
        }
    }

    @Test func nothingStoredIsAConflict() throws {
        try TestStore.with { _, cache in
            let lost = try #require(throws: TokenCacheError.self) {
                try cache.replaceRefreshToken(Self.token("rt-2", family: "1"), expectedSecret: Secret("rt-1"))
            }
            #expect(lost.code == .conflict && lost.currentRevision == nil)
        }
    }
}
