// The driver `make instructions` runs (Benchmarks/Instructions/instructions.py drives it; README.md, "Instruction
// counts"). Two modes:
//
//   InstructionsDriver populate --store DIR --key FILE --tokens N
//       creates a key file and a store holding the synthetic population of N access tokens (Population.swift), in a
//       few large durable write transactions. Run natively, never under valgrind.
//   InstructionsDriver check --store DIR --key FILE --tokens N
//       opens the store read-only (no upgrade of an older format), checks that it holds that population and prints
//       its format versions: whether this build can measure a store another build wrote.
//   InstructionsDriver measure --store DIR --key FILE --tokens N [--ops hit_one_token,...,ingest] [--scale S]
//       runs under `valgrind --tool=callgrind --instr-atstart=no`: opens the store and prepares every query and token
//       response uninstrumented, then per operation: a warm-up, CALLGRIND_ZERO_STATS, n1 operations,
//       CALLGRIND_DUMP_STATS_AT("<op> n1"), zero, n2 further operations, dump "<op> n2". The script takes
//       (dump n2 − dump n1) / (n2 − n1): what the loop costs once (entering it, the requests) cancels. Every operation
//       of both runs is a distinct draw (a fixed seed), and each answer is checked after the dumps; a wrong outcome
//       fails the run. Without valgrind the requests are no-ops: a quick check of the same code path.
//
// Only the public API of `TokenCache` is used (no @testable, no SPI): the same source must build against an older
// and a newer tree of the library.
import CCallgrindRequests
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct Options {
    var mode = ""
    var store = ""
    var key = ""
    var tokens = 0
    var ops = Plan.order
    var scale = 1.0

    init(_ arguments: [String]) throws {
        var rest = arguments.dropFirst()
        guard let mode = rest.popFirst(), ["populate", "check", "measure"].contains(mode) else {
            throw Failure("usage: InstructionsDriver populate|check|measure --store DIR --key FILE --tokens N [--ops a,b] [--scale S]")
        }
        self.mode = mode
        while let name = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Failure("\(name) needs a value") }
            switch name {
            case "--store": store = value
            case "--key": key = value
            case "--tokens": tokens = Int(value) ?? 0
            case "--ops": ops = value.split(separator: ",").map(String.init)
            case "--scale": scale = Double(value) ?? 0
            default: throw Failure("unknown option \(name)")
            }
        }
        guard !store.isEmpty, !key.isEmpty, tokens >= 10 else { throw Failure("--store, --key and --tokens (at least 10) are required") }
        guard scale > 0 else { throw Failure("--scale must be positive") }
        for op in ops where Plan.all[op] == nil { throw Failure("unknown operation \(op) (known: \(Plan.order.joined(separator: ", ")))") }
    }

    func configuration(tokens population: Population) -> Configuration {
        // Through the environment's defaults, so that `TOKEN_CACHE_CIPHER` chooses the cipher of the population's store
        // (a tree that does not know the variable ignores it).
        var environment = ["TOKEN_CACHE_DIR": store, "TOKEN_CACHE_KEY_FILE": key]
        environment["TOKEN_CACHE_CIPHER"] = getenv("TOKEN_CACHE_CIPHER").map { String(cString: $0) }
        var configuration = Configuration.fromEnvironment(environment)
        // Room for the whole population without map growth (about 5 KB per access token with its companions).
        configuration.initialMapSize = max(64 << 20, population.recordCount * 2_600)
        configuration.maximumMapSize = max(configuration.initialMapSize * 2, 1 << 30)
        return configuration
    }
}

/// How many operations of each kind are measured, and from which draws. Warm-up draws come from a stream of their own.
struct Plan {
    var warmup: Int
    var n1: Int
    var n2: Int
    var stream: UInt64
    var warmupStream: UInt64

    /// The operations, in the order they run (ingest last: it changes the store).
    /// - hit_one_token: a silent-lookup hit whose bucket (client, realm) holds that one access token; the result is
    ///   released, its companions never touched (`.onFirstAccess`).
    /// - hit_uniform: the same over a uniform draw of all stored access tokens (6 in 10 in one-token buckets, the
    ///   rest in buckets of 2–3, whose summaries are opened).
    /// - miss: an account that never signed in, in a stored client and realm: `interaction_required`.
    /// - hit_companions: a one-token hit, then `result.companions` (refresh token, ID token, account) read.
    /// - ingest: `TokenResponse(json:)` of a refresh-grant response for a stored account and its access token, then
    ///   `TokenStore.ingest` (one durable write transaction; the fsync runs in the kernel, so it costs no counted
    ///   instruction).
    static let order = ["hit_one_token", "hit_uniform", "miss", "hit_companions", "ingest"]
    static let all: [String: Plan] = [
        "hit_one_token": Plan(warmup: 100, n1: 400, n2: 2_000, stream: 0x417, warmupStream: 0x1417),
        "hit_uniform": Plan(warmup: 100, n1: 400, n2: 2_000, stream: 0x4170, warmupStream: 0x1_4170),
        "miss": Plan(warmup: 100, n1: 400, n2: 2_000, stream: 0x3155, warmupStream: 0x1_3155),
        "hit_companions": Plan(warmup: 50, n1: 200, n2: 1_000, stream: 0xC0C0, warmupStream: 0x1_C0C0),
        "ingest": Plan(warmup: 20, n1: 40, n2: 200, stream: 0x16E5, warmupStream: 0x1_16E5),
    ]

    func scaled(_ factor: Double) -> Plan {
        var plan = self
        plan.n1 = max(1, Int((Double(n1) * factor).rounded()))
        plan.n2 = max(plan.n1 + 1, Int((Double(n2) * factor).rounded()))
        return plan
    }

    /// The warm-up items, the n1 items and the n2 items: `make(count, stream)` gives the first `count` draws of a
    /// stream; the n1 and n2 runs take consecutive, disjoint draws of ``stream``.
    func items<T>(_ make: (Int, UInt64) throws -> [T]) rethrows -> (warmup: [T], n1: [T], n2: [T]) {
        let measured = try make(n1 + n2, stream)
        return (try make(warmup, warmupStream), Array(measured.prefix(n1)), Array(measured.dropFirst(n1)))
    }
}

// MARK: The measured loops. Not inlined, so the loop around the library calls is the same code in every build; the
// items are read in place through a buffer pointer (an Array subscript would copy a query and retain its strings).

@inline(never)
func lookups(_ store: TokenStore, _ queries: UnsafeBufferPointer<SilentLookupQuery>, expecting outcome: SilentLookupResult.Outcome) throws -> Int {
    var expected = 0
    for index in queries.indices {
        let result = try store.silentLookup(queries[index])
        if result.outcome == outcome { expected += 1 }
    }
    return expected
}

@inline(never)
func lookupsWithCompanions(_ store: TokenStore, _ queries: UnsafeBufferPointer<SilentLookupQuery>) throws -> Int {
    var complete = 0
    for index in queries.indices {
        let result = try store.silentLookup(queries[index])
        let companions = try result.companions
        if result.outcome == .hit, companions.refreshToken != nil, companions.idToken != nil, companions.account != nil { complete += 1 }
    }
    return complete
}

@inline(never)
func ingests(_ store: TokenStore, _ responses: UnsafeBufferPointer<(json: [UInt8], context: TokenRequestContext)>) throws -> Int {
    var replaced = 0
    for index in responses.indices {
        let result = try store.ingest(TokenResponse(json: responses[index].json), context: responses[index].context)
        if result.accessTokensRemoved == 1 { replaced += 1 }
    }
    return replaced
}

// MARK: Modes

func populate(_ options: Options) throws {
    let population = Population(accessTokens: options.tokens)
    try KeyFile.create(at: options.key)
    let store = try TokenStore.create(options.configuration(tokens: population))
    // Whole accounts, about 50,000 records per durable write transaction (one fsync each).
    let accountsPerTransaction = max(1, 50_000 / 23)
    var first = 0
    while first < population.accounts {
        let last = min(population.accounts, first + accountsPerTransaction)
        let batch = population.batch(first..<last)
        try store.write { writer in try batch.put(into: writer) }
        first = last
    }
    try store.write { writer in
        for metadata in Population.appMetadata { try writer.put(metadata) }
    }
    let counts = try store.info().recordCounts
    guard counts == population.expectedCounts else { throw Failure("the population was not written as planned: record counts \(counts)") }
    print("populated \(population.recordCount) records (\(population.accessTokens) access tokens, \(population.accounts) accounts)")
}

func check(_ options: Options) throws {
    let population = Population(accessTokens: options.tokens)
    var configuration = options.configuration(tokens: population)
    configuration.readOnly = true
    let store = try TokenStore.open(configuration)
    let info = try store.info()
    guard info.recordCounts == population.expectedCounts else {
        throw Failure("the store does not hold the population of \(options.tokens) access tokens: \(info.recordCounts)")
    }
    print(#"{"format":"\#(info.readVersion)/\#(info.writeVersion)"}"#)
}

/// The cipher the store seals with, as its info names it; builds from before stores named one sealed every record with
/// XChaCha20-Poly1305. Read by reflection, so that this one driver source builds against those trees too.
func cipher(of info: StoreInfo) -> String {
    Mirror(reflecting: info).children.first { $0.label == "cipher" }.map { "\($0.value)" } ?? "xchacha20-poly1305"
}

func measure(_ options: Options) throws {
    let underValgrind = tc_running_on_valgrind() != 0
    if underValgrind && tc_callgrind_requests_available() == 0 {
        throw Failure("built without <valgrind/callgrind.h> (install valgrind, then rebuild): nothing would be measured")
    }
    let population = Population(accessTokens: options.tokens)
    let store = try TokenStore.open(options.configuration(tokens: population))
    let info = try store.info()
    guard info.recordCounts == population.expectedCounts else {
        throw Failure("the store does not hold the population of \(options.tokens) access tokens: \(info.recordCounts)")
    }
    let ops = Plan.order.filter { options.ops.contains($0) }

    /// Zeroes the counters, runs `body` over the n1 items, dumps "<op> n1", then the same over the n2 items.
    func measured<T>(_ op: String, _ items: (warmup: [T], n1: [T], n2: [T]), _ body: (UnsafeBufferPointer<T>) throws -> Int) throws -> (Int, Int) {
        _ = try items.warmup.withUnsafeBufferPointer(body)
        tc_callgrind_zero_stats()
        let first = try items.n1.withUnsafeBufferPointer(body)
        tc_callgrind_dump_stats("\(op) n1")
        tc_callgrind_zero_stats()
        let second = try items.n2.withUnsafeBufferPointer(body)
        tc_callgrind_dump_stats("\(op) n2")
        return (first, second)
    }

    // Every item is prepared before instrumentation starts (uninstrumented code runs several times faster under valgrind).
    let plans = Dictionary(uniqueKeysWithValues: ops.map { ($0, Plan.all[$0]!.scaled(options.scale)) })
    func hits(oneTokenBuckets: Bool) -> (Int, UInt64) -> [SilentLookupQuery] {
        { population.hitQueries(count: $0, stream: $1, oneTokenBuckets: oneTokenBuckets) }
    }
    var queries: [String: (warmup: [SilentLookupQuery], n1: [SilentLookupQuery], n2: [SilentLookupQuery])] = [:]
    for op in ops where op != "ingest" {
        let plan = plans[op]!
        switch op {
        case "hit_uniform": queries[op] = plan.items(hits(oneTokenBuckets: false))
        case "miss": queries[op] = plan.items { count, stream in (0..<count).map { population.missQuery(number: $0, stream: stream) } }
        default: queries[op] = plan.items(hits(oneTokenBuckets: true))
        }
    }
    let responses = try plans["ingest"].map { plan in
        try plan.items { count, stream in try (0..<count).map { try population.tokenResponse(number: $0, stream: stream) } }
    }

    tc_callgrind_start_instrumentation()
    var report: [String] = []
    for op in ops {
        let plan = plans[op]!
        let counted: (Int, Int)
        switch op {
        case "hit_one_token", "hit_uniform": counted = try measured(op, queries[op]!) { try lookups(store, $0, expecting: .hit) }
        case "miss": counted = try measured(op, queries[op]!) { try lookups(store, $0, expecting: .interactionRequired) }
        case "hit_companions": counted = try measured(op, queries[op]!) { try lookupsWithCompanions(store, $0) }
        default:
            counted = try measured(op, responses!) { try ingests(store, $0) }
            // Each response replaced one stored access token and its companions: the store keeps its size.
            guard try store.info().recordCounts == population.expectedCounts else {
                throw Failure("ingest changed the store's record counts: the responses did not replace stored tokens")
            }
        }
        // Every lookup must give its expected answer. An ingest replaces the access token it was drawn for
        // (accessTokensRemoved 1); a draw repeated in the stream (draws are with replacement) replaces it again.
        guard counted.0 == plan.n1, counted.1 == plan.n2 else {
            throw Failure("\(op): only \(counted.0) of \(plan.n1) and \(counted.1) of \(plan.n2) operations gave the expected answer")
        }
        report.append(#""\#(op)":{"warmup":\#(plan.warmup),"n1":\#(plan.n1),"n2":\#(plan.n2)}"#)
    }
    print(
        #"{"valgrind":\#(underValgrind),"tokens":\#(options.tokens),"format":"\#(info.readVersion)/\#(info.writeVersion)","cipher":"\#(cipher(of: info))","ops":{\#(report.joined(separator: ","))}}"#
    )
}

do {
    let options = try Options(CommandLine.arguments)
    switch options.mode {
    case "populate": try populate(options)
    case "check": try check(options)
    default: try measure(options)
    }
} catch {
    let message = Array("InstructionsDriver: \(error)\n".utf8)
    _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}
