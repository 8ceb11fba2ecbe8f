import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCache
import TokenCacheOperations

@testable import TokenCacheClient

#if canImport(Glibc)
import Glibc
#endif

/// `changes()`: this client's writes at once, other processes' within the poll interval, and no listener left behind.
@Suite struct ChangeFeedTests {
    /// Collects a stream's events in the background.
    final class Collected: Sendable {
        let events = Mutex<[CacheChange]>([])
        func snapshot() -> [CacheChange] { events.withLock { $0 } }

        /// Waits until `count` events arrived.
        func wait(for count: Int) async throws {
            try await wait { $0.count >= count }
        }

        /// Waits until the events so far satisfy `done` (up to ``hangBound``: in a full test run, long synchronous
        /// tests can hold every thread of the pool, and with it the poller, for minutes).
        func wait(until done: ([CacheChange]) -> Bool) async throws {
            try await waitUntil("the events expected") { done(snapshot()) }
        }
    }

    static func listen(_ client: TokenClient) -> (Collected, Task<Void, Never>) {
        let collected = Collected()
        let stream = client.changes()
        let task = Task {
            for await change in stream { collected.events.withLock { $0.append(change) } }
        }
        return (collected, task)
    }

    @Test func thisClientsWritesAreReportedAsTheyCommit() async throws {
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        try await withClient(clock: clock) { client in
            let (collected, task) = Self.listen(client)
            defer { task.cancel() }
            let user = AccountReference(homeAccountID: User.home, username: User.username)
            try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            try await collected.wait(for: 2)
            #expect(collected.snapshot() == [.accountAdded(user), .tokensWritten(user, clientID: User.client)])
            clock.advance(by: 7200)
            _ = try await client.token(for: User.request(), refresh: endpoint.redeem)
            try await collected.wait(for: 3)
            #expect(collected.snapshot().last == .tokensWritten(user, clientID: User.client))
            try await client.signOut(homeAccountID: User.home, clientID: nil)
            try await collected.wait(for: 4)
            #expect(collected.snapshot().last == .accountRemoved(user))
            // Nothing was anybody else's: a poll reports nothing more. Events arrive in order, so the change another
            // handle commits after that poll is the next one.
            #expect(collected.snapshot().count == 4)
            client.feed.poll(client.store)
            try TokenStore.open(client.store.configuration).put(AppMetadata(clientID: "foreign", environment: "login.microsoftonline.com"))
            client.feed.poll(client.store)
            try await collected.wait(for: 5)
            #expect(collected.snapshot().dropFirst(4) == [.changedElsewhere])
        }
    }

    @Test func anotherProcessesWritesAreReportedWithinThePollInterval() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-feed")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let configuration = Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))
        let client = try TokenClient(configuration: configuration, changePollInterval: .milliseconds(50))
        let (collected, task) = Self.listen(client)
        defer { task.cancel() }
        await #expect(processExitsWith: .success) { [root = root as String] in
            let clock = TestClock()
            let other = try TokenClient(configuration: Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key")), clock: clock)
            try await other.ingest(
                FakeTokenEndpoint(clock: clock).signIn(username: "megan.bowen@contoso.example", uid: "11111111-0000-0000-66f3-3332eca7ea81"),
                clientID: User.client, authority: User.authority, scopes: ["User.Read"]
            )
        }
        // Within two poll intervals of the commit on an idle machine (measured apart from the tests: the test
        // process runs other tests alongside, which can hold the pool for seconds); here, that they arrive.
        try await collected.wait(for: 2)
        let other = AccountReference(homeAccountID: "11111111-0000-0000-66f3-3332eca7ea81.\(User.utid)", username: "megan.bowen@contoso.example")
        #expect(collected.snapshot() == [.accountAdded(other), .changedElsewhere])
    }

    @Test func aRekeyByAnotherHandleIsReportedOnce() async throws {
        try await withClient { client in
            let (collected, task) = Self.listen(client)
            defer { task.cancel() }
            // Another handle of the same store (as another process would have) rotates the data key.
            let other = try TokenStore.open(client.store.configuration)
            _ = try other.rotateDataKey()
            try await collected.wait { $0.contains(.storeRekeyed) }
            // Polls after the report find the rekey again. Events arrive in order: an account another handle adds
            // after them is reported after anything they reported.
            client.feed.poll(client.store)
            client.feed.poll(client.store)
            let later = FakeTokenEndpoint(clock: TestClock()).signIn(username: "megan.bowen@contoso.example", uid: "11111111-0000-0000-66f3-3332eca7ea81")
            try TokenStore.open(client.store.configuration).ingest(
                later, context: TokenRequestContext(clientID: User.client, authority: User.authority, requestedScopes: ["User.Read"], now: ReferenceTime.now)
            )
            client.feed.poll(client.store)
            let added = AccountReference(homeAccountID: "11111111-0000-0000-66f3-3332eca7ea81.\(User.utid)", username: "megan.bowen@contoso.example")
            try await collected.wait { $0.contains(.accountAdded(added)) }
            let events = collected.snapshot()
            #expect(events.count { $0 == .storeRekeyed } == 1)
            #expect(events.allSatisfy { $0 == .storeRekeyed || $0 == .changedElsewhere || $0 == .accountAdded(added) })
        }
    }

    @Test func aListenerThatStopsLeavesNothingRunning() async throws {
        try await withClient { client in
            let (_, first) = Self.listen(client)
            let (_, second) = Self.listen(client)
            // `changes()` subscribes before it returns.
            #expect(client.feed.listenerCount == 2)
            first.cancel()
            await first.value
            #expect(client.feed.listenerCount == 1)
            second.cancel()
            await second.value
            #expect(client.feed.listenerCount == 0)
        }
    }

    /// A poll between this client's commit and its report must not take the commit for another process's.
    @Test func aPollDuringAnOwnWriteWaitsForIt() async throws {
        try await withClient { client in
            let (collected, task) = Self.listen(client)
            defer { task.cancel() }
            // Two writes of this client's, committed in order, reported in the other order.
            for name in ["own-1", "own-2"] {
                client.feed.beginOwnWrite()
                let before = client.store.lastCommitID
                try client.store.put(AppMetadata(clientID: name, environment: "login.microsoftonline.com"))
                client.feed.accountOwnCommit(before: before, after: client.store.lastCommitID)
                client.feed.poll(client.store)
            }
            client.feed.ownWrite([])
            client.feed.ownWrite([])
            client.feed.poll(client.store)
            // A commit this client did not begin is reported as another process's; events arrive in order, so one
            // that the polls above reported would come first.
            try client.store.put(AppMetadata(clientID: "foreign", environment: "login.microsoftonline.com"))
            client.feed.poll(client.store)
            try await collected.wait(for: 1)
            #expect(collected.snapshot() == [.changedElsewhere])
        }
    }

    @Test func streamsEndWhenTheirClientGoes() async throws {
        try await withClient { owner in
            var client: TokenClient? = TokenClient(store: owner.store)
            let stream = client!.changes()
            let ended = Task { for await _ in stream {}; return true }
            client = nil
            #expect(await ended.value)
        }
    }
}
