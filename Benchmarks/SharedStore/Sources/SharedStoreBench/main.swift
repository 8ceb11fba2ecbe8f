import Foundation
import TokenCache

// `make bench-shared` (Benchmarks/README.md, "The shared store on PostgreSQL"): the shared store and the one-blob-per-
// user design side by side on one private PostgreSQL server, in one run. Runs under Scripts/with-postgresql, which
// gives the server's URL in TOKEN_CACHE_TEST_POSTGRESQL (and TOKEN_CACHE_TEST_POSTGRESQL_TCP for TCP on loopback).
//
//   SharedStoreBench [--sizes 10000,100000] [--lookups N] [--writes N] [--throughput-seconds S] [--mix-seconds S]
//                    [--lost-writes K] [--hosts H] [--output FILE.json] [--markdown FILE.md]
//   SharedStoreBench worker '<HostTask JSON>'      (one host process of the four-host phases; started by the run)

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "worker" {
    do {
        let task = try JSONDecoder().decode(HostTask.self, from: Data(arguments[1].utf8))
        let report = try Host.run(task)
        print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        exit(0)
    } catch {
        note("host process: \(error)")
        exit(1)
    }
}

func parseOptions(_ arguments: [String]) throws -> Options {
    var options = Options()
    var index = 0
    func value() throws -> String {
        index += 1
        guard index < arguments.count else { throw BenchError("\(arguments[index - 1]) needs a value") }
        return arguments[index]
    }
    func number(_ text: String) throws -> Double {
        guard let number = Double(text), number > 0 else { throw BenchError("\(text) is not a positive number") }
        return number
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--sizes":
            options.sizes = try value().split(whereSeparator: { $0 == "," || $0 == " " }).map { Int(try number(String($0))) }
        case "--lookups": options.lookups = Int(try number(try value()))
        case "--writes": options.writes = Int(try number(try value()))
        case "--throughput-seconds": options.throughputSeconds = try number(try value())
        case "--mix-seconds": options.mixSeconds = try number(try value())
        case "--lost-writes": options.lostWrites = Int(try number(try value()))
        case "--hosts": options.hosts = Int(try number(try value()))
        case "--output": options.output = try value()
        case "--markdown":
            let path = try value()
            options.markdown = path.isEmpty ? nil : path
        default: throw BenchError("unknown argument \(arguments[index])")
        }
        index += 1
    }
    guard !options.sizes.isEmpty else { throw BenchError("--sizes names no size") }
    return options
}

func main() throws {
    let options = try parseOptions(arguments)
    let environment = ProcessInfo.processInfo.environment
    guard let socketURL = environment["TOKEN_CACHE_TEST_POSTGRESQL"], !socketURL.isEmpty else {
        throw BenchError("TOKEN_CACHE_TEST_POSTGRESQL is not set: run under Scripts/with-postgresql (make bench-shared)")
    }
    let socket = try ServerAddress(url: socketURL)
    var transports = [socket]
    if let tcpURL = environment["TOKEN_CACHE_TEST_POSTGRESQL_TCP"], !tcpURL.isEmpty {
        transports.insert(try ServerAddress(url: tcpURL), at: 0)
    }
    let admin = try Connection(try socket.administrator(socketURL: socketURL))
    let figures = ServerFigures(admin: admin, logPath: environment["TOKEN_CACHE_TEST_POSTGRESQL_LOG"])

    let keyDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("tc-bench-shared-\(getpid())").path
    try FileManager.default.createDirectory(atPath: keyDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(atPath: keyDirectory) }
    let keyFile = keyDirectory + "/key"
    try KeyFile.create(at: keyFile)

    let run = Environment(primary: transports[0], transports: transports, figures: figures, keyFile: keyFile)
    note("shared-store benchmark: sizes \(options.sizes.map(Format.count).joined(separator: ", ")); \(Machine.cpuModel); PostgreSQL \(figures.version); \(transports.map(\.transport).joined(separator: " and "))")
    let started = Clock.now()
    var sizes: [String: SizeResult] = [:]
    for size in options.sizes {
        sizes[String(size)] = try SizeRun(tokens: size, options: options, environment: run).run()
    }
    let seconds = Double(Clock.now() - started) / 1e9

    var gates = Gates()
    for (size, result) in sizes {
        guard let lookup = result.lookup_ours[run.primary.transport] else { continue }
        gates.results[size] = GateResult(
            p50_ns: lookup.serial.p50_ns, p99_ns: lookup.serial.p99_ns, p50_pass: lookup.serial.p50_ns <= gates.p50_limit_ns,
            p99_pass: lookup.serial.p99_ns <= gates.p99_limit_ns
        )
    }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
    let result = RunResult(
        meta: .init(
            date: formatter.string(from: Date()), cpu_model: Machine.cpuModel, cpus: ProcessInfo.processInfo.activeProcessorCount,
            kernel: Machine.kernel, postgresql: figures.version, transport: run.primary.transport,
            other_transports: transports.dropFirst().map(\.transport),
            parameters: .init(
                sizes: options.sizes, lookups: options.lookups, writes: options.writes, throughput_seconds: options.throughputSeconds,
                mix_seconds: options.mixSeconds, mix_write_every: options.writeEvery, lost_writes_per_host: options.lostWrites,
                hosts: options.hosts, connections_per_pool: options.connections
            ),
            total_seconds: seconds
        ),
        gates: gates, sizes: sizes
    )
    let report = Report(result: result).markdown()
    print(report)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    try encoder.encode(result).write(to: URL(fileURLWithPath: options.output))
    if let markdown = options.markdown { try Data(report.utf8).write(to: URL(fileURLWithPath: markdown)) }
    note("wrote \(options.output)\(options.markdown.map { " and \($0)" } ?? "") (\(String(format: "%.0f", seconds)) s)")
}

do {
    try main()
} catch {
    note("shared-store benchmark: \(String(reflecting: error))")
    exit(1)
}
