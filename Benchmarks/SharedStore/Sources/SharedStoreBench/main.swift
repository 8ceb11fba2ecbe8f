import Foundation
import TokenCache

// `make bench-shared` (Benchmarks/README.md, "The shared store on PostgreSQL"): the shared store and the one-blob-per-
// user design side by side on one private PostgreSQL server, in one run. Runs under Scripts/with-postgresql, which
// gives the server's URL in TOKEN_CACHE_TEST_POSTGRESQL (and TOKEN_CACHE_TEST_POSTGRESQL_TCP for TCP on loopback).
//
//   SharedStoreBench [--sizes 10000,100000] [--large-sizes 1000000] [--merge FILE.json] [--lookups N] [--writes N]
//                    [--throughput-seconds S] [--mix-seconds S] [--lost-writes K] [--hosts H] [--output FILE.json]
//                    [--markdown FILE.md]
//   SharedStoreBench worker '<HostTask JSON>'      (one host process of the four-host phases; started by the run)
//
// A size of --large-sizes runs the population, the sizes on the server and the lookups only (the other sections
// would take hours at a million tokens on a small machine); --merge keeps the sizes of an earlier run's JSON that
// this run does not measure, so that a large size is added to the results of the full run (`make bench-shared-large`).

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
        case "--large-sizes":
            options.largeSizes = try value().split(whereSeparator: { $0 == "," || $0 == " " }).map { Int(try number(String($0))) }
        case "--merge":
            let path = try value()
            options.merge = path.isEmpty ? nil : path
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
    guard !options.sizes.isEmpty || !options.largeSizes.isEmpty else { throw BenchError("--sizes and --large-sizes name no size") }
    return options
}

func main() throws {
    let options = try parseOptions(arguments)
    // Read before anything is measured: a merge that cannot be made fails the run at once.
    let earlier = try options.merge.map { path in try JSONDecoder().decode(RunResult.self, from: Data(contentsOf: URL(fileURLWithPath: path))) }
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
    let measured = options.sizes + options.largeSizes
    note("shared-store benchmark: sizes \(measured.map(Format.count).joined(separator: ", ")); \(Machine.cpuModel); PostgreSQL \(figures.version); \(transports.map(\.transport).joined(separator: " and "))")
    let started = Clock.now()
    var sizes: [String: SizeResult] = [:]
    for size in options.sizes {
        sizes[String(size)] = try SizeRun(tokens: size, options: options, environment: run).run()
    }
    for size in options.largeSizes {
        let sizeStarted = Clock.now()
        var result = try SizeRun(tokens: size, options: options, environment: run).runLarge()
        result.large = LargeRun(
            date: Clock.utcMinute(), seconds: Double(Clock.now() - sizeStarted) / 1e9, cpu_model: Machine.cpuModel, postgresql: figures.version,
            transport: run.primary.transport, lookups: options.lookups, throughput_seconds: options.throughputSeconds
        )
        sizes[String(size)] = result
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
    var result = RunResult(
        meta: .init(
            date: Clock.utcMinute(), cpu_model: Machine.cpuModel, cpus: ProcessInfo.processInfo.activeProcessorCount,
            kernel: Machine.kernel, postgresql: figures.version, transport: run.primary.transport,
            other_transports: transports.dropFirst().map(\.transport),
            parameters: .init(
                sizes: measured, large_sizes: options.largeSizes.isEmpty ? nil : options.largeSizes, lookups: options.lookups,
                writes: options.writes, throughput_seconds: options.throughputSeconds, mix_seconds: options.mixSeconds,
                mix_write_every: options.writeEvery, lost_writes_per_host: options.lostWrites, hosts: options.hosts,
                connections_per_pool: options.connections
            ),
            total_seconds: seconds
        ),
        gates: gates, sizes: sizes
    )
    if let earlier { result = result.merged(into: earlier) }
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
