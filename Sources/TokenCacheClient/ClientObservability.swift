public import Logging
public import Metrics

/// Where the client reports what it does: a swift-log `Logger` (none by default) and swift-metrics counters and
/// timers (through the factory given, else whatever backend the app bootstrapped `MetricsSystem` with; none by
/// default).
///
/// Nothing secret is ever logged or measured. Account ids, usernames and client ids are replaced by a pseudonym
/// (`acct-…`, `client-…`: a hash under a key drawn for this process, so lines of one run can be correlated and runs
/// cannot) unless ``revealIdentifiers`` is set.
public struct ClientObservability: Sendable {
    /// The logger; nil logs nothing.
    public var logger: Logger?
    /// Log account and client ids as they are instead of as pseudonyms.
    public var revealIdentifiers: Bool
    /// Where the metrics go; nil: `MetricsSystem.factory`, as bootstrapped by the app.
    public var metricsFactory: (any MetricsFactory)?

    /// Logging to `logger` (nil: no logging), identifiers as pseudonyms unless `revealIdentifiers`, metrics to
    /// `metricsFactory` (nil: the bootstrapped system's).
    public init(logger: Logger? = nil, revealIdentifiers: Bool = false, metricsFactory: (any MetricsFactory)? = nil) {
        self.logger = logger
        self.revealIdentifiers = revealIdentifiers
        self.metricsFactory = metricsFactory
    }

    /// No logging; metrics go wherever `MetricsSystem` sends them.
    public static let standard = ClientObservability()
}

/// The client's metrics, made once (a metric's creation goes through the backend's factory).
///
/// - `token_cache_client_requests_total{outcome}`: `token(for:)` calls by outcome: `l1_hit`, `hit`, `refreshed`,
///   `acquired`, `interaction_required`, `failed`.
/// - `token_cache_client_refreshes_total{result}`: refresh closures called, by `success` / `failure`.
/// - `token_cache_client_acquisitions_total{result}`: acquire closures called (new grants without a refresh token:
///   client credentials, on-behalf-of), by `success` / `failure`.
/// - `token_cache_client_joined_refreshes_total`: callers that waited for a refresh another caller started.
/// - `token_cache_client_lease_waits_total`: refreshes that waited for another process's lease.
/// - `token_cache_client_refresh_duration_seconds`: a refresh from its start to the answer (the closure included).
/// - `token_cache_client_lease_wait_duration_seconds`: how long a refresh waited for another process's lease.
/// - `token_cache_client_late_stores_total{result}`: redeemed responses whose store failed for a while
///   (``PendingStores``): `retried` when one is handed to the retries, then one of `stored` (stored late),
///   `not_wanted` (the account was signed out meanwhile) or `given_up` (its bound passed, or a failure that does not
///   pass: the rotation is lost).
struct ClientMetrics: Sendable {
    let l1Hits: Counter
    let hits: Counter
    let refreshed: Counter
    let acquired: Counter
    let interactionRequired: Counter
    let failed: Counter
    let refreshSuccesses: Counter
    let refreshFailures: Counter
    let acquisitionSuccesses: Counter
    let acquisitionFailures: Counter
    let joinedRefreshes: Counter
    let leaseWaits: Counter
    let refreshDuration: Metrics.Timer
    let leaseWaitDuration: Metrics.Timer
    let storesRetried: Counter
    let storedLate: Counter
    let lateStoresNotWanted: Counter
    let lateStoresGivenUp: Counter

    init(factory: any MetricsFactory) {
        func requests(_ outcome: String) -> Counter {
            Counter(label: "token_cache_client_requests_total", dimensions: [("outcome", outcome)], factory: factory)
        }
        l1Hits = requests("l1_hit")
        hits = requests("hit")
        refreshed = requests("refreshed")
        acquired = requests("acquired")
        interactionRequired = requests("interaction_required")
        failed = requests("failed")
        refreshSuccesses = Counter(label: "token_cache_client_refreshes_total", dimensions: [("result", "success")], factory: factory)
        refreshFailures = Counter(label: "token_cache_client_refreshes_total", dimensions: [("result", "failure")], factory: factory)
        acquisitionSuccesses = Counter(label: "token_cache_client_acquisitions_total", dimensions: [("result", "success")], factory: factory)
        acquisitionFailures = Counter(label: "token_cache_client_acquisitions_total", dimensions: [("result", "failure")], factory: factory)
        joinedRefreshes = Counter(label: "token_cache_client_joined_refreshes_total", factory: factory)
        leaseWaits = Counter(label: "token_cache_client_lease_waits_total", factory: factory)
        refreshDuration = Metrics.Timer(label: "token_cache_client_refresh_duration_seconds", dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
        leaseWaitDuration = Metrics.Timer(label: "token_cache_client_lease_wait_duration_seconds", dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
        func lateStores(_ result: String) -> Counter {
            Counter(label: "token_cache_client_late_stores_total", dimensions: [("result", result)], factory: factory)
        }
        storesRetried = lateStores("retried")
        storedLate = lateStores("stored")
        lateStoresNotWanted = lateStores("not_wanted")
        lateStoresGivenUp = lateStores("given_up")
    }
}

/// What the client logs through, with identifiers redacted as configured.
struct ClientLog: Sendable {
    let logger: Logger?
    let revealIdentifiers: Bool

    init(_ observability: ClientObservability) {
        logger = observability.logger
        revealIdentifiers = observability.revealIdentifiers
    }

    /// An account id as logged: itself, or `acct-` and a pseudonym.
    func account(_ homeAccountID: String) -> Logger.MetadataValue {
        .string(revealIdentifiers ? homeAccountID : "acct-" + Self.pseudonym(IdentifierCase.folded(homeAccountID)))
    }

    /// A client id as logged: itself, or `client-` and a pseudonym.
    func client(_ clientID: String) -> Logger.MetadataValue {
        .string(revealIdentifiers ? clientID : "client-" + Self.pseudonym(IdentifierCase.folded(clientID)))
    }

    /// Sixteen hex digits of a keyed hash under a key drawn at random for this process: stable within the run only,
    /// and not reversible by hashing candidates (client ids are a small public set) even where `Hasher`'s own seed is
    /// fixed (`SWIFT_DETERMINISTIC_HASHING`), since the key is drawn from the system's generator and hashed in first.
    static func pseudonym(_ text: String) -> String {
        var hasher = Hasher()
        hasher.combine(pseudonymKey.0)
        hasher.combine(pseudonymKey.1)
        hasher.combine(text)
        let word = UInt64(bitPattern: Int64(hasher.finalize()))
        let digits = String(word, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static let pseudonymKey: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()

    /// The request's identifiers as metadata.
    func metadata(_ request: TokenRequest) -> Logger.Metadata {
        ["account": account(request.homeAccountID), "client": client(request.clientID), "scopes": .string("\(request.scopes.count)")]
    }

    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, _ metadata: @autoclosure () -> Logger.Metadata) {
        logger?.log(level: level, message(), metadata: metadata())
    }
}
