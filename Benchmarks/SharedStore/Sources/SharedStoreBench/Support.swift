import Foundation
import Synchronization
@_spi(Benchmarking) import TokenCacheBenchmarking

/// Percentiles of one measured operation, in nanoseconds (nearest rank, as every figure of the Benchmarks/ folder).
struct Latency: Codable, Sendable {
    var p50_ns: UInt64
    var p90_ns: UInt64
    var p99_ns: UInt64
    var mean_ns: UInt64
    var samples: Int

    init(_ nanoseconds: [UInt64]) {
        let summary = LatencySummary(nanoseconds: nanoseconds.isEmpty ? [0] : nanoseconds)
        p50_ns = summary.p50
        p90_ns = summary.p90
        p99_ns = summary.p99
        mean_ns = nanoseconds.isEmpty ? 0 : nanoseconds.reduce(0, +) / UInt64(nanoseconds.count)
        samples = nanoseconds.count
    }
}

/// What several callers did in a fixed time: operations, failures, and each operation's latency.
struct Throughput: Codable, Sendable {
    var callers: Int
    var seconds: Double
    var operations: Int
    var errors: Int
    var operations_per_second: Double
    var latency: Latency
}

enum Clock {
    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    /// The wall clock to the minute, in UTC, as the results name their date.
    static func utcMinute() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: Date())
    }

    /// Sleeps until the monotonic clock reads `deadline` (nanoseconds).
    static func wait(until deadline: UInt64) {
        while true {
            let now = now()
            if now >= deadline { return }
            usleep(UInt32(min(deadline - now, 50_000_000) / 1000))
        }
    }
}

/// Results of several threads: each slot written by one thread, read after they all ended.
private final class Slots<R>: @unchecked Sendable {
    var values: [R?]
    init(_ count: Int) { values = Array(repeating: nil, count: count) }
}

/// Runs `body(caller)` on `count` threads of their own (the synchronous API blocks its thread) and waits for all.
func onThreads<R: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> R) -> [R] {
    let slots = Slots<R>(count)
    let group = DispatchGroup()
    for caller in 0..<count {
        group.enter()
        let thread = Thread {
            slots.values[caller] = body(caller)
            group.leave()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
    group.wait()
    return slots.values.map { $0! }
}

/// `count` callers on threads of their own, each calling `operation(caller, i)` for `i` = 0, 1, … until `seconds`
/// have passed since a common start; every call timed.
func measureCallers(_ count: Int, seconds: Double, _ operation: @escaping @Sendable (Int, Int) throws -> Void) -> Throughput {
    let (timings, errors) = runCallers(count, seconds: seconds, operation)
    return Throughput(
        callers: count, seconds: seconds, operations: timings.count, errors: errors, operations_per_second: Double(timings.count) / seconds,
        latency: Latency(timings)
    )
}

/// As ``measureCallers(_:seconds:_:)``, returning every call's time and the number of calls that threw.
func runCallers(_ count: Int, seconds: Double, _ operation: @escaping @Sendable (Int, Int) throws -> Void) -> (timings: [UInt64], errors: Int) {
    let start = Clock.now() + 50_000_000
    let end = start + UInt64(seconds * 1e9)
    let results = onThreads(count) { caller -> (timings: [UInt64], errors: Int) in
        var timings: [UInt64] = []
        timings.reserveCapacity(100_000)
        var errors = 0
        Clock.wait(until: start)
        var i = 0
        while true {
            let before = Clock.now()
            if before >= end { break }
            do { try operation(caller, i) } catch { errors += 1 }
            timings.append(Clock.now() - before)
            i += 1
        }
        return (timings, errors)
    }
    return (results.flatMap(\.timings), results.reduce(0) { $0 + $1.errors })
}

/// Times `count` calls of `operation(i)` after `warmup` untimed ones; fewer (at least 50) when they take longer
/// than `budget` seconds in all.
func measureSerial(count: Int, warmup: Int, budget: Double = .infinity, _ operation: (Int) throws -> Void) rethrows -> Latency {
    for i in 0..<warmup { try operation(i) }
    var timings: [UInt64] = []
    timings.reserveCapacity(count)
    let end = budget.isFinite ? Clock.now() + UInt64(budget * 1e9) : .max
    for i in 0..<count {
        let before = Clock.now()
        try operation(warmup + i)
        timings.append(Clock.now() - before)
        if i >= 49 && timings.last! + before >= end { break }
    }
    return Latency(timings)
}

/// Runs `body` on the cooperative pool and blocks this (non-pool) thread until it returns.
func blocking<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
    let result = Mutex<Result<R, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<R, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// The machine's facts printed beside every wall-clock figure.
enum Machine {
    /// `lscpu`'s "Model name".
    static let cpuModel: String = {
        let output = run("/usr/bin/env", ["lscpu"]) ?? ""
        for line in output.split(separator: "\n") where line.hasPrefix("Model name:") {
            return line.dropFirst("Model name:".count).trimmingCharacters(in: .whitespaces)
        }
        return "unknown CPU"
    }()

    /// The 1-minute load average (/proc/loadavg): other work on the machine during a run shows here.
    static var load: Double {
        Double((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first ?? "") ?? -1
    }

    static var kernel: String { (run("/usr/bin/env", ["uname", "-r"]) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }

    static func run(_ path: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}

/// Human-readable durations and sizes.
enum Format {
    static func duration(_ nanoseconds: UInt64) -> String { duration(Double(nanoseconds)) }

    static func duration(_ nanoseconds: Double) -> String {
        switch nanoseconds {
        case ..<1_000: return String(format: "%.0f ns", nanoseconds)
        case ..<1_000_000: return String(format: "%.0f µs", nanoseconds / 1e3)
        case ..<10_000_000: return String(format: "%.2f ms", nanoseconds / 1e6)
        case ..<1_000_000_000: return String(format: "%.1f ms", nanoseconds / 1e6)
        default: return String(format: "%.2f s", nanoseconds / 1e9)
        }
    }

    static func bytes(_ count: Int) -> String {
        switch count {
        case ..<10_000: return "\(count) B"
        case ..<10_000_000: return String(format: "%.1f KB", Double(count) / 1e3)
        case ..<10_000_000_000: return String(format: "%.1f MB", Double(count) / 1e6)
        default: return String(format: "%.2f GB", Double(count) / 1e9)
        }
    }

    static func rate(_ perSecond: Double) -> String {
        perSecond >= 100 ? String(format: "%.0f/s", perSecond) : String(format: "%.1f/s", perSecond)
    }

    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (i, ch) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 && ch != "-" { out.append(",") }
            out.append(ch)
        }
        return String(out.reversed())
    }
}

/// Standard error, for progress lines (standard output holds the table, or a worker's JSON).
func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
