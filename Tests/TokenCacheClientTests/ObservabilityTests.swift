import Foundation
import Logging
import Metrics
import MetricsTestKit
import Synchronization
import TestSupport
import Testing
import TokenCache

@testable import TokenCacheClient

/// Logging and metrics: what happened is reported, and never a token, an account id, a username or a client id
/// unless the app asks for identifiers.
@Suite struct ObservabilityTests {
    /// Keeps every record logged, rendered with its metadata.
    struct CapturingHandler: LogHandler {
        let records: Records
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let rendered = "\(event.level) \(event.message) \((event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            records.lines.withLock { $0.append(rendered) }
        }
    }

    final class Records: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
    }

    /// An error whose description quotes what a token endpoint might send back: a token.
    struct EndpointSaid: Error, CustomStringConvertible {
        var description: String { "invalid_grant for rt-1 of \(User.username)" }
    }

    static func client(_ clock: TestClock, root: String, reveal: Bool, metrics: TestMetrics, records: Records) throws -> TokenClient {
        let logger = Logger(label: "test") { _ in CapturingHandler(records: records) }
        return try TokenClient(
            configuration: Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key")), clock: clock,
            observability: ClientObservability(logger: logger, revealIdentifiers: reveal, metricsFactory: metrics)
        )
    }

    @Test(arguments: [false, true])
    func flowsAreLoggedAndCountedWithoutSecrets(revealIdentifiers: Bool) async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-obs")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let metrics = TestMetrics()
        let records = Records()
        let client = try Self.client(clock, root: root, reveal: revealIdentifiers, metrics: metrics, records: records)

        // Interaction required, a sign-in, a hit, an L1 hit, a failed refresh, a refresh.
        _ = try? await client.token(for: User.request(), refresh: endpoint.redeem)
        try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        _ = try await client.token(for: User.request(), refresh: endpoint.redeem)
        _ = try await client.token(for: User.request(), refresh: endpoint.redeem)
        clock.advance(by: 7200)
        _ = try? await client.token(for: User.request()) { _, _ in throw EndpointSaid() }
        _ = try await client.token(for: User.request(), refresh: endpoint.redeem)

        func requests(_ outcome: String) throws -> Int64 {
            try metrics.expectCounter("token_cache_client_requests_total", [("outcome", outcome)]).totalValue
        }
        #expect(try requests("interaction_required") == 1)
        #expect(try requests("hit") == 1)
        #expect(try requests("l1_hit") == 1)
        #expect(try requests("failed") == 1)
        #expect(try requests("refreshed") == 1)
        #expect(try metrics.expectCounter("token_cache_client_refreshes_total", [("result", "failure")]).totalValue == 1)
        #expect(try metrics.expectCounter("token_cache_client_refreshes_total", [("result", "success")]).totalValue == 1)
        #expect(try metrics.expectTimer("token_cache_client_refresh_duration_seconds").values.count == 2)

        let lines = records.all
        #expect(lines.contains { $0.hasPrefix("info interaction required") })
        #expect(lines.contains { $0.hasPrefix("warning refresh failed:") && $0.contains("EndpointSaid") })
        #expect(lines.contains { $0.hasPrefix("debug refresh stored") })
        for line in lines {
            for secret in ["rt-1", "rt-2", "at-1", "at-2", User.username] { #expect(!line.contains(secret), "\(line)") }
            #expect(line.contains(User.home) == revealIdentifiers, "\(line)")
            #expect(line.contains(User.client) == revealIdentifiers, "\(line)")
        }
        if !revealIdentifiers {
            // Pseudonyms: stable within the run, so one account's lines can be followed.
            let accounts = Set(lines.compactMap { $0.split(separator: " ").first { $0.hasPrefix("account=") } })
            #expect(accounts.count == 1 && accounts.first?.hasPrefix("account=acct-") == true)
        }
    }
}
