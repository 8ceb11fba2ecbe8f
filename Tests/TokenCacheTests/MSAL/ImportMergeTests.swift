import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

@Suite struct ImportMergeTests {
    /// Every pair of stamps over a small domain (absent, two values) against the rule written out longhand.
    @Test func exhaustively() {
        let values: [Int64?] = [nil, -5, 0, 7]
        var checked = 0
        for existingWritten in values {
            for existingExpiry in values {
                for incomingWritten in values {
                    for incomingExpiry in values {
                        let existing = ImportMerge.Stamp(writtenAt: existingWritten, expiresOn: existingExpiry)
                        let incoming = ImportMerge.Stamp(writtenAt: incomingWritten, expiresOn: incomingExpiry)
                        let rank: (Int64?) -> Int64 = { $0 ?? Int64.min }
                        let expected: Bool
                        if rank(existingWritten) != rank(incomingWritten) {
                            expected = rank(incomingWritten) > rank(existingWritten)
                        } else if rank(existingExpiry) != rank(incomingExpiry) {
                            expected = rank(incomingExpiry) > rank(existingExpiry)
                        } else {
                            expected = false
                        }
                        #expect(ImportMerge.incomingWins(existing: existing, incoming: incoming) == expected,
                                "\(existing) vs \(incoming)")
                        // Antisymmetric: never both win; equal stamps keep the existing.
                        if ImportMerge.incomingWins(existing: existing, incoming: incoming) {
                            #expect(!ImportMerge.incomingWins(existing: incoming, incoming: existing))
                        }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 256)
    }

    @Test func theLaterCachedAtWinsThenTheLaterExpiryThenTheExisting() {
        func token(_ secret: String, cachedAt: Int64, expiresOn: Int64) -> AccessToken {
            AccessToken(homeAccountID: "h", environment: "e", clientID: "c", realm: "r", target: "a", secret: Secret(secret),
                        cachedAt: cachedAt, expiresOn: expiresOn)
        }
        let stamp = ImportMerge.stamp(of:) as (AccessToken) -> ImportMerge.Stamp
        #expect(ImportMerge.winner(existing: token("old", cachedAt: 1, expiresOn: 9), incoming: token("new", cachedAt: 2, expiresOn: 3), stamp: stamp).secret.reveal() == "new")
        #expect(ImportMerge.winner(existing: token("old", cachedAt: 2, expiresOn: 9), incoming: token("new", cachedAt: 1, expiresOn: 99), stamp: stamp).secret.reveal() == "old")
        #expect(ImportMerge.winner(existing: token("old", cachedAt: 2, expiresOn: 3), incoming: token("new", cachedAt: 2, expiresOn: 4), stamp: stamp).secret.reveal() == "new")
        #expect(ImportMerge.winner(existing: token("old", cachedAt: 2, expiresOn: 4), incoming: token("new", cachedAt: 2, expiresOn: 4), stamp: stamp).secret.reveal() == "old")
    }

    @Test func refreshTokensUseTheirModificationTime() {
        let old = RefreshToken(homeAccountID: "h", environment: "e", clientID: "c", secret: Secret("old"), lastModificationTime: 5)
        let new = RefreshToken(homeAccountID: "H", environment: "E", clientID: "C", secret: Secret("new"), lastModificationTime: 6)
        let timeless = RefreshToken(homeAccountID: "h", environment: "e", clientID: "c", secret: Secret("timeless"))
        #expect(ImportMerge.winner(existing: old, incoming: new, stamp: ImportMerge.stamp(of:)).secret.reveal() == "new")
        #expect(ImportMerge.winner(existing: timeless, incoming: old, stamp: ImportMerge.stamp(of:)).secret.reveal() == "old")
        #expect(ImportMerge.winner(existing: old, incoming: timeless, stamp: ImportMerge.stamp(of:)).secret.reveal() == "old")
    }

    /// ID tokens record no write time: the JWT's `iat`, then `exp`, orders them, so a re-issued one replaces the
    /// stored one; two that are not JWTs and differ: the incoming one (it is what the file holds now).
    @Test func idTokensAreOrderedByTheirIssueTime() {
        func jwt(_ payload: String) -> String { unsignedJWT(payload: payload) }
        func idToken(_ secret: String) -> IDToken {
            IDToken(homeAccountID: "h", environment: "e", clientID: "c", realm: "r", secret: Secret(secret))
        }
        let first = idToken(jwt("{\"iat\":100,\"exp\":3700}"))
        let reissued = idToken(jwt("{\"iat\":200,\"exp\":3800}"))
        let longer = idToken(jwt("{\"iat\":100,\"exp\":9999}"))
        #expect(ImportMerge.stamp(of: reissued) == ImportMerge.Stamp(writtenAt: 200, expiresOn: 3800))
        #expect(ImportMerge.idTokenWins(existing: first, incoming: reissued))
        #expect(!ImportMerge.idTokenWins(existing: reissued, incoming: first))
        #expect(ImportMerge.idTokenWins(existing: first, incoming: longer))
        #expect(!ImportMerge.idTokenWins(existing: first, incoming: first))
        #expect(!ImportMerge.idTokenWins(existing: first, incoming: idToken("opaque")))
        #expect(ImportMerge.idTokenWins(existing: idToken("opaque-1"), incoming: idToken("opaque-2")))
        #expect(!ImportMerge.idTokenWins(existing: idToken("opaque-1"), incoming: idToken("opaque-1")))
    }

    /// The fold applies the rule per identity, which compares case-insensitively and scopes as sets.
    @Test func theFoldMergesByTheEnginesIdentity() {
        var fold = MSALImportFold()
        let base = AccessToken(homeAccountID: "uid.utid", environment: "login.microsoftonline.com", clientID: "c", realm: "r",
                               target: "User.Read Mail.Read", secret: Secret("first"), cachedAt: 10, expiresOn: 20)
        var sameIdentity = base
        sameIdentity.homeAccountID = "UID.UTID"
        sameIdentity.target = "mail.read  user.read"
        sameIdentity.secret = Secret("second")
        sameIdentity.cachedAt = 11
        var otherKey = base
        otherKey.tokenType = "pop"
        otherKey.keyID = "k"
        var bearerSpelled = base
        bearerSpelled.tokenType = "BEARER"
        bearerSpelled.cachedAt = 9
        fold.add(.accessToken(base))
        fold.add(.accessToken(sameIdentity))
        fold.add(.accessToken(otherKey))
        fold.add(.accessToken(bearerSpelled))
        #expect(fold.mergedCount == 2)
        #expect(Set(fold.content.accessTokens.map { $0.secret.reveal() }) == ["second", "first"])
        #expect(fold.content.accessTokens.count == 2)
    }
}
