import Foundation
import Synchronization
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

#if canImport(Glibc)
import Glibc
#endif

/// The readers figure of `cachetool bench`: how lookup throughput grows from one reader to two, with two threads
/// sharing one open store and with two processes each opening it.
///
/// A reader makes `lookups` hit lookups (its own uniform draw) as fast as it can; the readers of a round start
/// together (threads at a barrier, processes on a signal once each has opened the store and built its queries)
/// and the round's throughput is all their lookups divided by the time from the first start to the last end.
/// Each configuration runs `rounds` times, the configurations in turn (so a noisy moment hits all of them), and
/// the median round of each is reported.
struct BenchReaders {
    /// Lookups per second of each configuration (medians of the rounds).
    var oneThread = 0.0
    var twoThreads = 0.0
    var oneProcess = 0.0
    var twoProcesses = 0.0
    var lookupsPerReader = 0
    var rounds = 0

    var threadScaling: Double { oneThread > 0 ? twoThreads / oneThread : 0 }
    var processScaling: Double { oneProcess > 0 ? twoProcesses / oneProcess : 0 }

    static func measure(
        _ cache: TokenStore, population: SyntheticPopulation, profile: String, place: BenchPlace, lookupsPerReader: Int, rounds: Int
    ) throws -> BenchReaders {
        let streams: [UInt64] = [0x5EED_0001, 0x5EED_0002]
        let queries = streams.map { population.hitQueries(count: lookupsPerReader, stream: $0) }
        var one: [Double] = [], two: [Double] = [], oneP: [Double] = [], twoP: [Double] = []
        for _ in 0..<rounds {
            one.append(try threadRound(cache, queries: Array(queries.prefix(1))))
            two.append(try threadRound(cache, queries: queries))
            oneP.append(try processRound(place: place, population: population, profile: profile, streams: Array(streams.prefix(1)), lookups: lookupsPerReader))
            twoP.append(try processRound(place: place, population: population, profile: profile, streams: streams, lookups: lookupsPerReader))
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return BenchReaders(
            oneThread: median(one), twoThreads: median(two), oneProcess: median(oneP), twoProcesses: median(twoP),
            lookupsPerReader: lookupsPerReader, rounds: rounds
        )
    }

    /// One round of `queries.count` threads in this process, each making its lookups on the shared `cache`.
    static func threadRound(_ cache: TokenStore, queries: [[SilentLookupQuery]]) throws -> Double {
        let readers = queries.count
        let arrived = Atomic<Int>(0)
        let spans = Mutex<[(start: UInt64, end: UInt64)]>([])
        let failures = Mutex<[String]>([])
        let finished = DispatchGroup()
        for reader in 0..<readers {
            let mine = queries[reader]
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                do {
                    let span = try read(cache, mine) {
                        arrived.add(1, ordering: .acquiringAndReleasing)
                        while arrived.load(ordering: .acquiring) < readers {}
                    }
                    spans.withLock { $0.append(span) }
                } catch {
                    arrived.add(1, ordering: .acquiringAndReleasing)  // a reader that failed early must not hold the others
                    let message = (error as? BenchFailure)?.message ?? "a reader thread failed: \(error)"
                    failures.withLock { $0.append(message) }
                }
            }
            thread.start()
        }
        finished.wait()
        if let failure = failures.withLock({ $0.first }) { throw BenchFailure(failure) }
        return spans.withLock { throughput(lookups: queries.reduce(0) { $0 + $1.count }, spans: $0) }
    }

    /// One round of one child process per stream, started together once all are ready.
    static func processRound(place: BenchPlace, population: SyntheticPopulation, profile: String, streams: [UInt64], lookups: Int) throws -> Double {
        var children: [(process: Process, input: Pipe, output: Pipe)] = []
        defer { for child in children where child.process.isRunning { child.process.terminate() } }
        for stream in streams {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try BenchChild.executablePath())
            process.arguments = BenchChild.arguments(place: place, population: population, profile: profile) + [
                "--reader-lookups", "\(lookups)", "--stream", "\(stream)",
            ]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            children.append((process, input, output))
        }
        for child in children {
            guard readLine(child.output.fileHandleForReading) == "ready" else {
                throw BenchFailure("a reader process failed before it was ready (status \(child.process.terminationStatus))")
            }
        }
        for child in children { child.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        var spans: [(start: UInt64, end: UInt64)] = []
        for child in children {
            let fields = (readLine(child.output.fileHandleForReading) ?? "").split(separator: " ").compactMap { UInt64($0) }
            child.process.waitUntilExit()
            guard child.process.terminationReason == .exit, child.process.terminationStatus == 0, fields.count == 2 else {
                throw BenchFailure("a reader process failed (status \(child.process.terminationStatus))")
            }
            spans.append((fields[0], fields[1]))
        }
        return throughput(lookups: lookups * streams.count, spans: spans)
    }

    static func throughput(lookups: Int, spans: [(start: UInt64, end: UInt64)]) -> Double {
        guard let first = spans.map(\.start).min(), let last = spans.map(\.end).max(), last > first else { return 0 }
        return Double(lookups) * 1e9 / Double(last - first)
    }

    /// One line from `handle`, read a byte at a time (the child writes one short line per step), without its newline.
    static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(handle.fileDescriptor, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The reader side of a child process: builds its queries, opens the store, warms up, says "ready", waits for
    /// "go" on standard input, makes its lookups and prints its start and end (monotonic nanoseconds).
    static func runChild(store: String, keyFile: String, population: SyntheticPopulation, lookups: Int, stream: UInt64) throws {
        let queries = population.hitQueries(count: lookups, stream: stream)
        let cache = try TokenStore.open(Configuration(directory: store, keySource: .keyFile(path: keyFile)))
        let span = try read(cache, queries) {
            print("ready")
            fflush(nil)
            guard Swift.readLine() == "go" else { throw BenchFailure("the reader process was not told to go") }
        }
        print("\(span.start) \(span.end)")
        fflush(nil)
    }

    /// One reader, in a thread or a process: the first 200 queries once, untimed (warm-up); then `ready`, which
    /// returns when all readers may start; then every query, timed. Fails unless every lookup hit.
    static func read(_ cache: TokenStore, _ queries: [SilentLookupQuery], ready: () throws -> Void) throws -> (start: UInt64, end: UInt64) {
        for query in queries.prefix(200) { _ = try cache.silentLookup(query) }
        try ready()
        let start = MonotonicClock.nanoseconds()
        var misses = 0
        for query in queries where try cache.silentLookup(query).outcome != .hit { misses += 1 }
        let end = MonotonicClock.nanoseconds()
        guard misses == 0 else { throw BenchFailure("\(misses) reader lookups did not hit") }
        return (start, end)
    }
}
