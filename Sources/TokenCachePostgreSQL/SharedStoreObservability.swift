import Logging
import Metrics

/// What an operator sees of a shared store's connection to its server: swift-metrics counters and a gauge, and
/// swift-log lines. No identifier of a user, an account or a token is ever reported: only the store's location
/// (without its password) and what happened.
///
/// - `token_cache_shared_store_listening`: 1 while the change listener is connected (from the moment it has read the
///   versions of the buckets this host's answers depend on), else 0.
/// - `token_cache_shared_store_invalidations_total{cause}`: what made this host drop answers: `notification` (another
///   host's change, which drops the answers of the buckets it names) or `reconnect` (the listener came back and read
///   the buckets' versions again, which drops the answers of those that moved).
/// - `token_cache_shared_store_listener_losses_total`: times the listener's connection was lost.
/// - `token_cache_shared_store_listener_lag`: a timer, the round trip of the listener's heartbeat (every second) on its
///   own connection. The server delivers notifications on that connection in order, so a heartbeat answered late is a
///   listener behind on its notifications (a slow host, a congested link, a flood of changes).
/// - `token_cache_shared_store_unavailable_total`: operations that failed because the server could not be reached
///   or did not answer within the deadline.
/// - `token_cache_shared_store_bucket_regressions_total`: fetches that read a bucket version below one this host had
///   already read: the server's data went back (a restored backup, a standby promoted behind its primary).
/// - `token_cache_shared_store_conflicts_total{in}`: writes that lost to a concurrent one: `transaction` (run again)
///   or `plan` (fetched and decided again).
struct SharedStoreObservability: Sendable {
    let logger: Logger?
    let listening: Gauge
    let notifications: Counter
    let reconnects: Counter
    let losses: Counter
    let listenerLag: Metrics.Timer
    let unavailable: Counter
    let transactionConflicts: Counter
    let planConflicts: Counter
    let bucketRegressions: Counter

    init(logger: Logger?, factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        self.logger = logger
        listening = Gauge(label: "token_cache_shared_store_listening", dimensions: [], factory: factory)
        notifications = Counter(label: "token_cache_shared_store_invalidations_total", dimensions: [("cause", "notification")], factory: factory)
        reconnects = Counter(label: "token_cache_shared_store_invalidations_total", dimensions: [("cause", "reconnect")], factory: factory)
        losses = Counter(label: "token_cache_shared_store_listener_losses_total", dimensions: [], factory: factory)
        listenerLag = Metrics.Timer(label: "token_cache_shared_store_listener_lag", dimensions: [], factory: factory)
        unavailable = Counter(label: "token_cache_shared_store_unavailable_total", dimensions: [], factory: factory)
        transactionConflicts = Counter(label: "token_cache_shared_store_conflicts_total", dimensions: [("in", "transaction")], factory: factory)
        planConflicts = Counter(label: "token_cache_shared_store_conflicts_total", dimensions: [("in", "plan")], factory: factory)
        bucketRegressions = Counter(label: "token_cache_shared_store_bucket_regressions_total", dimensions: [], factory: factory)
    }

    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, location: String) {
        logger?.log(level: level, message(), metadata: ["store": .string(location)])
    }
}
