import Foundation
import TokenCache
import TokenCachePostgreSQL
@_spi(Benchmarking) import TokenCacheBenchmarking

/// What one host process is asked to do (the parent passes it as JSON on the command line: `worker '<json>'`).
struct HostTask: Codable, Sendable {
    enum Role: String, Codable, Sendable {
        /// Lookups and ingests over the whole population on the shared store, for `seconds`.
        case mixOurs = "mix-ours"
        /// The same on the one-blob design.
        case mixAnchor = "mix-anchor"
        /// `writes` ingests, each adding a distinct access token to one account, on the shared store.
        case lostOurs = "lost-ours"
        /// The same on the one-blob design.
        case lostAnchor = "lost-anchor"
    }

    var role: Role
    var host: Int
    /// The shared store's URL (with its schema), or for the one-blob design the server's.
    var url: String
    var anchorSchema: String
    var keyFile: String
    var accessTokens: Int
    /// CLOCK_MONOTONIC nanoseconds at which every host starts (the clock is system-wide).
    var startAt: UInt64
    var seconds: Double
    /// Every `writeEvery`-th operation of a mix is a write.
    var writeEvery: Int
    var writes: Int
    var lostAccount: Int
}

/// What a host process reports back (one JSON line on its standard output).
struct HostReport: Codable, Sendable {
    var host: Int
    /// How long after the common start the host began (its open took longer than the head start).
    var late_ms: Double
    var seconds: Double
    var lookups = 0
    var lookup_hits = 0
    var writes = 0
    /// Failures surfaced to the caller, by error code.
    var errors: [String: Int] = [:]
    /// Writes the caller ran again after a `conflict` error (the store had already retried them internally).
    var caller_retries = 0
    var lookup_latency: Latency?
    var write_latency: Latency?
    /// Every operation's time, for the parent to pool (dropped from the results file).
    var lookup_samples: [UInt64]?
    var write_samples: [UInt64]?
}

enum Host {
    /// Runs one host's task in this process.
    static func run(_ task: HostTask) throws -> HostReport {
        let workload = Workload(accessTokens: task.accessTokens)
        switch task.role {
        case .mixOurs, .lostOurs:
            let store = try TokenStore.open(Configuration.sharedStore(task.url, keySource: .keyFile(path: task.keyFile)))
            return task.role == .mixOurs ? try mixOurs(task, store, workload) : try lostOurs(task, store, workload)
        case .mixAnchor, .lostAnchor:
            let connection = try Connection(try ServerAddress(url: task.url))
            let table = AnchorTable(schema: task.anchorSchema)
            return task.role == .mixAnchor ? try mixAnchor(task, connection, table, workload) : try lostAnchor(task, connection, table, workload)
        }
    }

    static func code(_ error: any Error) -> String {
        if let error = error as? TokenCacheError { return error.code.name }
        return String(describing: type(of: error))
    }

    /// A mix for `seconds`: every `writeEvery`-th operation a write, the others lookups.
    private static func mix(
        _ task: HostTask, lookup: (Int) throws -> Bool, write: (Int) throws -> Void
    ) -> HostReport {
        Clock.wait(until: task.startAt)
        let late = Double(Clock.now() - task.startAt) / 1e6
        let end = task.startAt + UInt64(task.seconds * 1e9)
        var report = HostReport(host: task.host, late_ms: late, seconds: task.seconds)
        var lookups: [UInt64] = [], writes: [UInt64] = []
        lookups.reserveCapacity(200_000)
        var i = 0
        while true {
            let before = Clock.now()
            if before >= end { break }
            let isWrite = i % task.writeEvery == task.writeEvery - 1
            do {
                if isWrite {
                    try write(i / task.writeEvery)
                } else if try lookup(i) {
                    report.lookup_hits += 1
                }
            } catch {
                report.errors[code(error), default: 0] += 1
            }
            let elapsed = Clock.now() - before
            if isWrite { writes.append(elapsed) } else { lookups.append(elapsed) }
            i += 1
        }
        report.lookups = lookups.count
        report.writes = writes.count
        report.lookup_latency = Latency(lookups)
        report.write_latency = Latency(writes)
        report.lookup_samples = lookups
        report.write_samples = writes
        return report
    }

    private static func mixOurs(_ task: HostTask, _ store: TokenStore, _ workload: Workload) throws -> HostReport {
        let queries = workload.queries(count: 20_000, stream: 0x40_5700 + UInt64(task.host))
        let writes = (0..<2_000).map { workload.write(number: 1_000_000 * (task.host + 1) + $0) }
        // Warm: a connection per pool, the first statements planned.
        for query in queries.prefix(20) { _ = try store.silentLookup(query) }
        return mix(task) { i in
            try store.silentLookup(queries[i % queries.count]).outcome == .hit
        } write: { i in
            let write = writes[i % writes.count]
            try store.ingest(TokenResponse(json: write.json), context: write.context)
        }
    }

    private static func mixAnchor(_ task: HostTask, _ connection: Connection, _ table: AnchorTable, _ workload: Workload) throws -> HostReport {
        let requests = workload.queries(count: 20_000, stream: 0x40_5700 + UInt64(task.host)).map(Workload.anchorRequest)
        let writes = (0..<2_000).map { workload.write(number: 1_000_000 * (task.host + 1) + $0).anchor }
        for request in requests.prefix(20) { _ = try table.lookup(request, on: connection) }
        return mix(task) { i in
            try table.lookup(requests[i % requests.count], on: connection) != nil
        } write: { i in
            try table.writeToken(writes[i % writes.count], on: connection)
        }
    }

    /// `writes` ingests adding distinct access tokens to one account, all hosts at once; a write that fails with
    /// `conflict` (the store gave up after its own retries) is run again by the caller, as an app would.
    private static func lostOurs(_ task: HostTask, _ store: TokenStore, _ workload: Workload) throws -> HostReport {
        let writes = (0..<task.writes).map {
            workload.addingWrite(account: task.lostAccount, scope: Workload.lostScope(host: task.host, number: $0), seed: UInt64(task.host * 100_000 + $0))
        }
        _ = try store.silentLookup(workload.queries(count: 1, stream: 1)[0])
        Clock.wait(until: task.startAt)
        var report = HostReport(host: task.host, late_ms: Double(Clock.now() - task.startAt) / 1e6, seconds: 0)
        let began = Clock.now()
        var timings: [UInt64] = []
        for write in writes {
            let before = Clock.now()
            for attempt in 1... {
                do {
                    try store.ingest(TokenResponse(json: write.json), context: write.context)
                    report.writes += 1
                    break
                } catch let error as TokenCacheError where error.code == .conflict && attempt < 50 {
                    report.caller_retries += 1
                } catch {
                    report.errors[code(error), default: 0] += 1
                    break
                }
            }
            timings.append(Clock.now() - before)
        }
        report.seconds = Double(Clock.now() - began) / 1e9
        report.write_latency = Latency(timings)
        report.write_samples = timings
        return report
    }

    private static func lostAnchor(_ task: HostTask, _ connection: Connection, _ table: AnchorTable, _ workload: Workload) throws -> HostReport {
        let writes = (0..<task.writes).map {
            workload.addingWrite(account: task.lostAccount, scope: Workload.lostScope(host: task.host, number: $0), seed: UInt64(task.host * 100_000 + $0)).anchor
        }
        _ = try table.blob(writes[0].homeAccountID, on: connection)
        Clock.wait(until: task.startAt)
        var report = HostReport(host: task.host, late_ms: Double(Clock.now() - task.startAt) / 1e6, seconds: 0)
        let began = Clock.now()
        var timings: [UInt64] = []
        for write in writes {
            let before = Clock.now()
            do {
                try table.writeToken(write, on: connection)
                report.writes += 1
            } catch {
                report.errors[code(error), default: 0] += 1
            }
            timings.append(Clock.now() - before)
        }
        report.seconds = Double(Clock.now() - began) / 1e9
        report.write_latency = Latency(timings)
        report.write_samples = timings
        return report
    }

    /// Starts one process of this executable per task and collects their reports.
    static func spawn(_ tasks: [HostTask]) throws -> [HostReport] {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var running: [(Process, Pipe)] = []
        for task in tasks {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["worker", String(decoding: try JSONEncoder().encode(task), as: UTF8.self)]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            running.append((process, pipe))
        }
        var reports: [HostReport] = []
        for (process, pipe) in running {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchError("a host process exited with status \(process.terminationStatus)") }
            reports.append(try JSONDecoder().decode(HostReport.self, from: data))
        }
        return reports
    }
}

extension HostReport {
    var withoutSamples: HostReport {
        var report = self
        report.lookup_samples = nil
        report.write_samples = nil
        return report
    }
}
