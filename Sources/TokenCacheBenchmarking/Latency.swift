internal import TokenCacheMSAL
internal import TokenCache
#if canImport(Glibc)
import Glibc
#endif

/// `CLOCK_MONOTONIC` in nanoseconds: the clock of every timing `cachetool bench` reports, in one process and across
/// processes (the monotonic clock is system-wide, so a parent's timestamp before spawning a child and the child's
/// first timestamp in `main` can be subtracted).
@_spi(Benchmarking)
public enum MonotonicClock {
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// The p50, p90 and p99 of a set of latency samples, by the nearest-rank method: the `p`-th percentile of `n` sorted
/// samples is the sample at rank `⌈p/100 · n⌉` (1-based), an observed value, never an interpolation.
@_spi(Benchmarking)
public struct LatencySummary: Sendable, Equatable {
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var samples: Int

    /// - Precondition: `nanoseconds` is not empty.
    public init(nanoseconds: [UInt64]) {
        precondition(!nanoseconds.isEmpty, "no samples")
        let sorted = nanoseconds.sorted()
        p50 = Self.percentile(sorted: sorted, 50)
        p90 = Self.percentile(sorted: sorted, 90)
        p99 = Self.percentile(sorted: sorted, 99)
        samples = sorted.count
    }

    /// The nearest-rank `percent`-th percentile (1–100) of ascending `sorted`.
    public static func percentile(sorted: [UInt64], _ percent: Int) -> UInt64 {
        precondition(!sorted.isEmpty && (1...100).contains(percent))
        let rank = (percent * sorted.count + 99) / 100  // ⌈percent · n / 100⌉, 1...n
        return sorted[rank - 1]
    }
}
