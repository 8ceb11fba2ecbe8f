import CoreMetrics

/// The client's metrics backend: it sends the L1's hits (`token_cache_client_requests_total{outcome="l1_hit"}`)
/// to the trace of the request they answered (``TokenSourceTrace/current``) and drops everything else (the host
/// counts what it reports itself).
struct TraceMetrics: MetricsFactory {
    private static let l1Hits = L1HitCounter()

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        if label == "token_cache_client_requests_total", dimensions.contains(where: { $0 == ("outcome", "l1_hit") }) { return Self.l1Hits }
        return NOOPMetricsHandler.instance
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler { NOOPMetricsHandler.instance }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { NOOPMetricsHandler.instance }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { NOOPMetricsHandler.instance }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { NOOPMetricsHandler.instance }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    /// Notes an L1 hit on the trace of the task that counts it.
    private final class L1HitCounter: CounterHandler, Sendable {
        func increment(by amount: Int64) { TokenSourceTrace.current?.noteL1Hit() }
        func reset() {}
    }
}
