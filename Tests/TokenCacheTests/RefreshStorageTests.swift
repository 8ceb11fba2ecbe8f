import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TokenCache

/// A refresh's response stored as a prepared rotate-and-ingest: prepared (parsed, derived, keyed) without the writer,
/// then stored by compare-and-swap of the rotation and the rest of the response in one transaction.
@Suite struct RefreshStorageTests {
    /// A store with one signed-in account, and its refresh token as stored.
    static func withSignedIn<R>(_ body: (TokenStore, StoredEntity<RefreshToken>) throws -> R) throws -> R {
        try TestStore.with { _, store in
            try store.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            let redeemed = try #require(try store.silentLookup(Responses.query()).refreshToken)
            return try body(store, redeemed)
        }
    }

    static func refreshContext() throws -> TokenRequestContext { try Responses.context(grantType: "refresh_token", now: Samples.now + 60) }

    static func refreshResponse(accessToken: String = "at-2", refreshToken: String? = "rt-2", scope: String = "User.Read openid profile offline_access") throws -> TokenResponse {
        try TokenResponse(json: Responses.json(accessToken: accessToken, scope: scope, refreshToken: refreshToken))
    }

    @Test func aRefreshIsPreparedWhileAnotherThreadHoldsTheWriter() throws {
        try Self.withSignedIn { store, redeemed in
            let inside = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let holderDone = DispatchSemaphore(value: 0)
            Thread {
                try? store.write { _ in
                    inside.signal()
                    release.wait()
                }
                holderDone.signal()
            }.start()
            inside.wait()
            // Preparing on a thread of its own, so that a preparation that waited for the writer fails the test
            // instead of hanging it.
            let prepared = Mutex<Result<PreparedRefresh, any Error>?>(nil)
            let malformed = Mutex<(any Error)?>(nil)
            let preparedInTime = DispatchSemaphore(value: 0)
            Thread {
                do {
                    let context = try Self.refreshContext()
                    prepared.withLock { $0 = Result { try store.prepareRefresh(try Self.refreshResponse(), redeemed: redeemed.entity, context: context) } }
                    do {
                        _ = try store.prepareRefresh(try Self.refreshResponse(scope: "User.Read \u{7F}"), redeemed: redeemed.entity, context: context)
                    } catch { malformed.withLock { $0 = error } }
                } catch { prepared.withLock { $0 = .failure(error) } }
                preparedInTime.signal()
            }.start()
            let finished = preparedInTime.wait(timeout: .now() + 20) == .success
            release.signal()
            holderDone.wait()
            #expect(finished, "preparing a refresh waited for the writer")
            guard finished else { preparedInTime.wait(); return }
            #expect((malformed.withLock { $0 } as? TokenCacheError)?.code == .invalidArgument)
            let plan = try #require(try prepared.withLock { $0 }?.get())
            #expect(try store.write { try $0.storeRefresh(plan) })
            let after = try store.silentLookup(Responses.query(now: Samples.now + 60))
            #expect(after.accessToken?.entity.secret.reveal() == "at-2")
            #expect(try after.refreshToken?.entity.secret.reveal() == "rt-2")
        }
    }

    @Test func aRotationStoredMeanwhileIsKeptAndTheRestIsStored() throws {
        try Self.withSignedIn { store, redeemed in
            let prepared = try store.prepareRefresh(try Self.refreshResponse(), redeemed: redeemed.entity, context: try Self.refreshContext())
            var other = redeemed.entity
            other.secret = Secret("rt-other")
            try store.replaceRefreshToken(other, expectedSecret: redeemed.entity.secret)
            #expect(try store.write { try $0.storeRefresh(prepared) })
            let after = try store.silentLookup(Responses.query(now: Samples.now + 60))
            #expect(after.accessToken?.entity.secret.reveal() == "at-2")
            #expect(try after.refreshToken?.entity.secret.reveal() == "rt-other")
        }
    }

    @Test func anAccountSignedOutMeanwhileGetsNothing() throws {
        try Self.withSignedIn { store, redeemed in
            for refreshToken in [Optional("rt-2"), nil] {
                let prepared = try store.prepareRefresh(
                    try Self.refreshResponse(refreshToken: refreshToken), redeemed: redeemed.entity, context: try Self.refreshContext()
                )
                _ = try store.removeAccount(homeAccountID: User.home, clientID: nil)
                #expect(try store.write { try $0.storeRefresh(prepared) } == false)
                let counts = try store.read { try $0.counts() }
                #expect(counts[.accessToken] == 0 && counts[.refreshToken] == 0 && counts[.account] == 0)
            }
        }
    }
}
