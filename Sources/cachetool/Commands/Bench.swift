import ArgumentParser
import Foundation
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool bench`: builds a temporary store of a synthetic population and measures, in one run, what an auth
/// client pays on this machine: silent lookups, a durable ingest, a cold open in a fresh process, and the raw
/// get + decrypt floor they are compared with.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure lookups, ingest and cold open on a temporary synthetic store on this machine.",
        discussion: """
            Builds a store of N synthetic access tokens in a fresh directory (under $TMPDIR, else /tmp: a real disk, \
            so fsync is real), measures, and removes it unless --keep. Population (default): per account 10 scope sets (access \
            tokens, 1-3 scopes each) over 8 buckets (4 clients x 2 realms, home tenant + one guest of 1,009), \
            1-3 per bucket; 2 Account records, 3 refresh tokens (one family), 8 ID tokens; 4 app metadata in all. \
            Secrets: access tokens 1,000-1,080 bytes, refresh tokens 1,000-1,099, ID tokens 1,100-1,299. \
            many-scopes: 5-20 scope sets per account.

            Queries are drawn uniformly over all stored access tokens: M per lookup figure and for the floor, M/10 \
            ingests (20 to 1,000), M/200 cold opens (5 to 30). Figures (stable names, also the keys of \
            --json): lookup_hit, lookup_miss (an account never signed in), lookup_refresh (no access token for \
            the scope, a refresh token to redeem), lookup_hit_companions (a hit, then its refresh token, ID \
            token and account read); client_token_hit (TokenClient.token(for:refresh:) answered by a lookup, \
            its L1 off), client_token_l1_hit (each request asked, then at once again: the repeat, answered by the client's in-process L1), \
            client_refresh (a forced refresh whose closure returns a prepared response at once: lease, rotation \
            and ingest in two fsync'd commits, then the answer read back); ingest_durable (one refresh-grant token \
            response, fsync'd); cold_open_first_lookup (a fresh process: open the store and answer one hit); process_start (spawn \
            to main of that process); floor_get_decrypt (one read transaction: get a stored access-token record \
            and decrypt it with the store's cipher, no token-cache logic); floor_get_decrypt_aes_256_gcm and \
            floor_get_decrypt_xchacha20_poly1305 (the same get, each record's cache lines read, then a copy of it \
            re-sealed in memory under that cipher opened: both measured alike, whatever the store's cipher; null \
            where the processor does not run it). Each has \
            p50_ns, p90_ns, p99_ns (nearest rank) and samples; \
            the lookup figures also allocations_per_call (calls to the C allocator, counted in this process) and \
            instructions_per_call (user-space, from the CPU's counters; null where the machine has none), from \
            a second, untimed pass over the same queries.

            readers: lookups per second of one reader thread, two threads sharing one open store, one reader \
            process and two processes each opening the store (hit queries, uniform; readers start together; \
            2M per reader, 1,000 to 200,000; the median of 3 rounds, run in turn), and the two scalings (two \
            over one). Also store_bytes (data.mdb; the store is loaded in key order, so its pages are full: a \
            store grown by puts in random key order is about 40% larger) and msal_json_bytes (the MSAL JSON \
            export of the same records, with secrets), the CPU model, the cipher (the store's: AES-256-GCM where \
            the processor runs it, or $TOKEN_CACHE_CIPHER) and the population. Nothing secret is printed.
            """
    )

    @Option(help: ArgumentHelp("Access tokens in the store.", valueName: "N"))
    var tokens: Int

    @Option(help: ArgumentHelp("Samples per lookup figure.", valueName: "M"))
    var lookups = 10_000

    @Option(help: ArgumentHelp("Directory for the store (created if missing; default: a fresh one in $TMPDIR).", valueName: "D"))
    var dir: String?

    @Flag(help: "Keep the store and its key file (<D>/store, <D>/key) instead of removing them.")
    var keep = false

    @Flag(help: "Only write the population into <D>/store (key <D>/key) and keep it: a large store to try other commands on.")
    var populateOnly = false

    @Flag(help: "Print one JSON object.")
    var json = false

    @Option(help: ArgumentHelp("Population profile.", valueName: "profile"))
    var population: PopulationProfile = .default

    @Option(help: ArgumentHelp("Seed of the population and the query draws.", valueName: "S"))
    var seed: UInt64 = 0

    enum PopulationProfile: String, ExpressibleByArgument, CaseIterable {
        case `default`
        case manyScopes = "many-scopes"

        var profile: SyntheticPopulation.Profile {
            switch self {
            case .default: .default
            case .manyScopes: .manyScopes
            }
        }
    }

    /// The figures, in the order they are reported. Their names are stable (README, "Benchmark it yourself").
    static let figures = [
        "lookup_hit", "lookup_miss", "lookup_refresh", "lookup_hit_companions", "client_token_hit", "client_token_l1_hit",
        "client_refresh", "ingest_durable", "cold_open_first_lookup", "process_start", "floor_get_decrypt",
    ] + StoreCipher.allCases.map(floorFigure)

    /// The floor under `cipher`, whichever cipher the store has: both are measured in every run, so that the two AEADs
    /// are compared on one machine at one moment. The store's own is ``floor_get_decrypt``.
    static func floorFigure(_ cipher: StoreCipher) -> String {
        "floor_get_decrypt_" + cipher.rawValue.replacingOccurrences(of: "-", with: "_")
    }

    func validate() throws {
        guard (1...100_000_000).contains(tokens) else { throw ValidationError("--tokens must be between 1 and 100000000.") }
        guard (1...10_000_000).contains(lookups) else { throw ValidationError("--lookups must be between 1 and 10000000.") }
        try Arguments.requireNonEmpty(dir, "--dir (name a directory, or leave --dir out for a fresh one in $TMPDIR)")
    }

    func run() throws {
        try BenchFailure.reporting {
            let population = SyntheticPopulation(accessTokens: tokens, profile: population.profile, seed: seed)
            let place = try BenchPlace(directory: dir)
            if populateOnly {
                let (_, nanoseconds) = try Self.populatedStore(population, place: place)
                Output.note(
                    "wrote \(ProgressBar.grouped(population.recordCount)) records in \(String(format: "%.1f", Double(nanoseconds) / 1e9)) s "
                        + "to \(place.store) (key file \(place.key))"
                )
                return
            }
            defer { if !keep { place.remove() } }
            let results = try measure(population, place: place)
            if keep { Output.note("kept the store at \(place.store) (key file \(place.key))") }
            print(json ? results.json() : results.table())
        }
    }

    /// A new store at `place` holding `population`, and the nanoseconds the population took to write.
    static func populatedStore(_ population: SyntheticPopulation, place: BenchPlace) throws -> (TokenStore, UInt64) {
        try KeyFile.create(at: place.key)
        var configuration = Configuration(directory: place.store, keySource: .keyFile(path: place.key))
        // The cipher `TOKEN_CACHE_CIPHER` names, as for every store cachetool creates: how the floor and the lookups
        // are measured under the other AEAD.
        configuration.cipher = ProcessInfo.processInfo.environment[Configuration.Variable.cipher].flatMap(Configuration.cipher(parsing:))
        // Room for the whole population without map growth (about 5 KB per access token with its companions).
        configuration.initialMapSize = max(64 << 20, population.recordCount * 2_600)
        configuration.maximumMapSize = max(configuration.initialMapSize * 2, 1 << 30)
        let cache = try TokenStore.create(configuration)

        let bar = ProgressBar(label: "populating", unit: "records")
        let total = population.recordCount
        let populateStart = MonotonicClock.nanoseconds()
        try population.populate(cache, recordsPerTransaction: 50_000, layout: .keyOrdered) { bar?.update(done: $0, total: total) }
        bar?.finish()
        return (cache, MonotonicClock.nanoseconds() - populateStart)
    }

    private func measure(_ population: SyntheticPopulation, place: BenchPlace) throws -> BenchResults {
        let (cache, populateNanoseconds) = try Self.populatedStore(population, place: place)
        var results = BenchResults(population: population, lookups: lookups, cpu: Self.cpuModel(), cipher: try cache.info().cipher)
        results.populateNanoseconds = populateNanoseconds

        // Silent lookups through the public API; every answer is checked, outside the timed region.
        let streamSalt = seed &* 0x9E37_79B9
        let hitQueries = population.hitQueries(count: lookups, stream: 0x417 &+ streamSalt)
        let refreshQueries = (0..<lookups).map { i in
            let (account, slot) = population.drawToken(i, stream: 0x12EF &+ streamSalt)
            return population.refreshQuery(account: account, slot: slot)
        }
        let missQueries = (0..<lookups).map { population.missQuery(number: $0 &+ Int(truncatingIfNeeded: streamSalt)) }
        results.figures["lookup_hit"] = try Self.timeLookups(cache, hitQueries, expecting: .hit, readingCompanions: false)
        results.figures["lookup_miss"] = try Self.timeLookups(cache, missQueries, expecting: .interactionRequired, readingCompanions: false)
        results.figures["lookup_refresh"] = try Self.timeLookups(cache, refreshQueries, expecting: .refresh, readingCompanions: false)
        results.figures["lookup_hit_companions"] = try Self.timeLookups(cache, hitQueries, expecting: .hit, readingCompanions: true)
        results.probes["lookup_hit"] = try Self.probeLookups(cache, hitQueries, readingCompanions: false)
        results.probes["lookup_miss"] = try Self.probeLookups(cache, missQueries, readingCompanions: false)
        results.probes["lookup_refresh"] = try Self.probeLookups(cache, refreshQueries, readingCompanions: false)
        results.probes["lookup_hit_companions"] = try Self.probeLookups(cache, hitQueries, readingCompanions: true)

        // Readers at once: threads of this process, then processes.
        results.readers = try BenchReaders.measure(
            cache, population: population, profile: self.population.rawValue, place: place,
            lookupsPerReader: min(max(2 * lookups, 1_000), 200_000), rounds: 3
        )

        // The floor, over the same store's access-token records: as stored, then with each cipher this processor runs
        // (the same records re-sealed in memory, both measured alike).
        let floor = try cache.measureGetDecryptFloor(samples: lookups, seed: seed).map(LatencySummary.init(nanoseconds:))
        results.figures["floor_get_decrypt"] = floor
        for cipher in StoreCipher.allCases {
            results.figures[Self.floorFigure(cipher)] =
                try cache.measureGetDecryptFloor(samples: lookups, seed: seed, cipher: cipher).map(LatencySummary.init(nanoseconds:))
        }

        // Cold opens: fresh processes, each opening the store and answering one hit.
        let coldOpens = max(5, min(lookups / 200, 30))
        var openTimes: [UInt64] = [], startTimes: [UInt64] = []
        for i in 0..<coldOpens {
            let child = try BenchChild.spawn(place: place, population: population, query: i, profile: self.population.rawValue)
            openTimes.append(child.openAndLookup)
            startTimes.append(child.processStart)
        }
        results.figures["cold_open_first_lookup"] = LatencySummary(nanoseconds: openTimes)
        results.figures["process_start"] = LatencySummary(nanoseconds: startTimes)

        // The async client: hits without and with its L1, then forced refreshes (which write, so after the reads).
        // Queries of their own: the lookups above have brought their tokens' pages in, which would flatter the client.
        let client = try BenchClient.measure(
            cache, hits: population.hitQueries(count: lookups, stream: 0xC11E &+ streamSalt), refreshes: max(20, min(lookups / 10, 1_000)), population: population,
            salt: 0x7E5 &+ Int(truncatingIfNeeded: streamSalt)
        )
        results.figures["client_token_hit"] = client.hit
        results.figures["client_token_l1_hit"] = client.answerCacheHit
        results.figures["client_refresh"] = client.refresh

        // Durable ingests, last: each response replaces a stored token and its companions (so the store keeps its size),
        // cached later than the queries' `now`, so a later hit query for that token would no longer hit.
        let ingests = max(20, min(lookups / 10, 1_000))
        let responses = (0..<ingests).map { population.tokenResponse(number: $0 &+ Int(truncatingIfNeeded: streamSalt)) }
        var ingestTimes: [UInt64] = []
        for (json, context) in responses {
            let start = MonotonicClock.nanoseconds()
            _ = try cache.ingest(TokenResponse(json: json), context: context)
            ingestTimes.append(MonotonicClock.nanoseconds() - start)
        }
        results.figures["ingest_durable"] = LatencySummary(nanoseconds: ingestTimes)

        // Sizes.
        results.storeBytes = cache.sizeAtRest ?? 0
        // The size of the whole export, counted one account at a time (the whole export holds every entity at once).
        results.msalJSONBytes = try population.msalExportByteCount(of: cache, includeSecrets: true)
        return results
    }

    static func timeLookups(
        _ cache: TokenStore, _ queries: [SilentLookupQuery], expecting outcome: SilentLookupResult.Outcome, readingCompanions: Bool
    ) throws -> LatencySummary {
        var times = [UInt64](repeating: 0, count: queries.count)
        var wrong = 0
        // Warm-up: the first queries once, untimed.
        for query in queries.prefix(200) { _ = try cache.silentLookup(query) }
        for (i, query) in queries.enumerated() {
            let start = MonotonicClock.nanoseconds()
            let result = try cache.silentLookup(query)
            if readingCompanions { _ = try result.companions }
            times[i] = MonotonicClock.nanoseconds() - start
            if result.outcome != outcome { wrong += 1 }
        }
        guard wrong == 0 else {
            throw BenchFailure("\(wrong) of \(queries.count) benchmark lookups did not give \(outcome.rawValue): the figures would be wrong")
        }
        return LatencySummary(nanoseconds: times)
    }

    /// Allocations and instructions per lookup of `queries`: one untimed pass (counting is separate from timing, so
    /// neither disturbs the other).
    static func probeLookups(_ cache: TokenStore, _ queries: [SilentLookupQuery], readingCompanions: Bool) throws -> BenchProbes.PerCall {
        try BenchProbes.measure(calls: queries.count) {
            for query in queries {
                let result = try cache.silentLookup(query)
                if readingCompanions { _ = try result.companions }
            }
        }
    }

    /// The "model name" of /proc/cpuinfo, else the machine's architecture.
    static func cpuModel() -> String {
        if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("model name") {
                if let colon = line.firstIndex(of: ":") {
                    return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "unknown (\(machine))"
    }
}

/// Where a bench run keeps its store and key, and what it removes afterwards.
struct BenchPlace {
    let root: String
    let createdRoot: Bool
    var store: String { root + "/store" }
    var key: String { root + "/key" }

    init(directory: String?) throws {
        let manager = FileManager.default
        if let directory {
            root = directory
            createdRoot = !manager.fileExists(atPath: directory)
            if createdRoot { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
            if manager.fileExists(atPath: store) || manager.fileExists(atPath: key) {
                throw BenchFailure("\(directory) already holds a store or key; bench needs an empty place")
            }
        } else {
            root = manager.temporaryDirectory.path + "/cachetool-bench-" + UUID().uuidString
            try manager.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            createdRoot = true
        }
    }

    func remove() {
        let manager = FileManager.default
        try? manager.removeItem(atPath: store)
        try? manager.removeItem(atPath: key)
        if createdRoot { try? manager.removeItem(atPath: root) }
    }
}

/// The figures of one run and their two renderings.
struct BenchResults {
    let population: SyntheticPopulation
    let lookups: Int
    let cpu: String
    /// The store's cipher: the floor and every lookup open records with it.
    let cipher: StoreCipher
    var figures: [String: LatencySummary] = [:]
    var probes: [String: BenchProbes.PerCall] = [:]
    var readers = BenchReaders()
    var storeBytes = 0
    var msalJSONBytes = 0
    var populateNanoseconds: UInt64 = 0

    var populationJSON: JSONValue {
        func range(_ range: ClosedRange<Int>) -> JSONValue {
            .object(["min": .integer(Int64(range.lowerBound)), "max": .integer(Int64(range.upperBound))])
        }
        return .object([
            "profile": .string(population.profile.rawValue),
            "seed": .integer(Int64(bitPattern: population.seed)),
            "access_tokens": .integer(Int64(population.accessTokens)),
            "accounts": .integer(Int64(population.accounts)),
            "records": .integer(Int64(population.recordCount)),
            "realms_per_account": .integer(Int64(SyntheticPopulation.realmsPerAccount)),
            "tenants": .integer(Int64(SyntheticPopulation.tenantCount)),
            "clients": .integer(Int64(SyntheticPopulation.clientIDs.count)),
            "family_clients": .integer(Int64(SyntheticPopulation.familyClientCount)),
            "buckets_per_account": .integer(Int64(SyntheticPopulation.bucketsPerAccount)),
            "scope_sets_per_account": range(population.scopeSetsPerAccount),
            "scopes_per_set": range(1...3),
            "per_account": .object(["accounts": .integer(2), "refresh_tokens": .integer(3), "id_tokens": .integer(8)]),
            "secret_bytes": .object([
                "access_token": range(SyntheticPopulation.accessTokenSecretBytes),
                "refresh_token": range(SyntheticPopulation.refreshTokenSecretBytes),
                "id_token": range(SyntheticPopulation.idTokenSecretBytes),
            ]),
            "queries": .string("uniform over all access tokens"),
        ])
    }

    func json() -> String {
        var object: [String: JSONValue] = [
            "tokens": .integer(Int64(population.accessTokens)),
            "cpu": .string(cpu),
            "cipher": .string(cipher.rawValue),
            "population": populationJSON,
            "store_bytes": .integer(Int64(storeBytes)),
            "msal_json_bytes": .integer(Int64(msalJSONBytes)),
        ]
        for name in Bench.figures {
            // A floor under a cipher this processor does not run is null.
            guard let figure = figures[name] else {
                object[name] = .null
                continue
            }
            var fields: [String: JSONValue] = [
                "p50_ns": .integer(Int64(figure.p50)), "p90_ns": .integer(Int64(figure.p90)),
                "p99_ns": .integer(Int64(figure.p99)), "samples": .integer(Int64(figure.samples)),
            ]
            if let probe = probes[name] {
                fields["allocations_per_call"] = probe.allocations.map { .double(Self.rounded($0)) } ?? .null
                fields["instructions_per_call"] = probe.instructions.map { .integer(Int64($0.rounded())) } ?? .null
            }
            object[name] = .object(fields)
        }
        object["readers"] = .object([
            "lookups_per_reader": .integer(Int64(readers.lookupsPerReader)),
            "rounds": .integer(Int64(readers.rounds)),
            "one_thread_per_s": .integer(Int64(readers.oneThread.rounded())),
            "two_threads_per_s": .integer(Int64(readers.twoThreads.rounded())),
            "two_threads_scaling": .double(Self.rounded(readers.threadScaling, places: 2)),
            "one_process_per_s": .integer(Int64(readers.oneProcess.rounded())),
            "two_processes_per_s": .integer(Int64(readers.twoProcesses.rounded())),
            "two_processes_scaling": .double(Self.rounded(readers.processScaling, places: 2)),
        ])
        return JSONValue.object(object).prettyPrinted()
    }

    func table() -> String {
        let grouped = ProgressBar.grouped
        let span = population.scopeSetsPerAccount
        var lines = [
            "token-cache bench: \(grouped(population.accessTokens)) access tokens, \(grouped(population.recordCount)) records, populated in \(Self.duration(populateNanoseconds))",
            "CPU: \(Terminal.sanitize(cpu)); records sealed with \(cipher)",
            "population: \(population.profile.rawValue) (seed \(population.seed)): \(grouped(population.accounts)) accounts; per account "
                + "\(span.lowerBound == span.upperBound ? "\(span.lowerBound)" : "\(span.lowerBound)-\(span.upperBound)") scope sets (1-3 scopes) "
                + "over 8 buckets (4 clients x 2 realms), 2 accounts, 3 refresh tokens, 8 ID tokens; secrets 1,000-1,299 bytes",
            "queries: drawn uniformly over all access tokens, \(grouped(lookups)) per lookup figure",
            "",
        ]
        var table = Table(headers: ["figure", "p50", "p90", "p99", "samples", "p50 / floor", "allocs", "instructions"])
        let floor = figures["floor_get_decrypt"]!.p50
        for name in Bench.figures {
            guard let figure = figures[name] else {
                table.append([name, "n/a", "", "", "", "", "", ""])
                continue
            }
            let ratio = (name.hasPrefix("lookup_") || name.hasPrefix("floor_get_decrypt_")) && floor > 0 ? String(format: "%.1fx", Double(figure.p50) / Double(floor)) : ""
            let probe = probes[name]
            table.append([
                name, Self.duration(figure.p50), Self.duration(figure.p90), Self.duration(figure.p99), grouped(figure.samples), ratio,
                probe.map { $0.allocations.map { String(format: "%.1f", $0) } ?? "n/a" } ?? "",
                probe.map { $0.instructions.map { grouped(Int($0.rounded())) } ?? "n/a" } ?? "",
            ])
        }
        lines.append(table.render())
        if let missing = StoreCipher.allCases.first(where: { figures[Bench.floorFigure($0)] == nil }) {
            lines.append("(\(Bench.floorFigure(missing)): this processor does not run \(missing))")
        }
        if probes.values.contains(where: { $0.instructions == nil }) {
            lines.append("(allocs and instructions: per lookup; this machine exposes no instruction counter)")
        }
        lines.append("")
        lines.append(
            "readers (hit lookups/s, median of \(readers.rounds) rounds of \(grouped(readers.lookupsPerReader)) per reader): "
                + "one thread \(grouped(Int(readers.oneThread))), two threads \(grouped(Int(readers.twoThreads))) "
                + String(format: "(%.2fx)", readers.threadScaling) + "; one process \(grouped(Int(readers.oneProcess))), "
                + "two processes \(grouped(Int(readers.twoProcesses))) " + String(format: "(%.2fx)", readers.processScaling)
        )
        lines.append("")
        lines.append("store_bytes      \(grouped(storeBytes)) (data.mdb)")
        lines.append("msal_json_bytes  \(grouped(msalJSONBytes)) (MSAL JSON export, with secrets)")
        return lines.joined(separator: "\n")
    }

    static func rounded(_ value: Double, places: Int = 1) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }

    static func duration(_ nanoseconds: UInt64) -> String {
        switch nanoseconds {
        case ..<10_000: "\(ProgressBar.grouped(Int(nanoseconds))) ns"
        case ..<1_000_000: String(format: "%.1f µs", Double(nanoseconds) / 1_000)
        case ..<1_000_000_000: String(format: "%.2f ms", Double(nanoseconds) / 1_000_000)
        default: String(format: "%.2f s", Double(nanoseconds) / 1_000_000_000)
        }
    }
}

/// `cachetool bench-child` (hidden): one cold open of a bench store in a fresh process. Builds its query first (not
/// timed), then times `TokenStore.open` to the answer of one silent lookup that must hit, and prints that duration
/// and the monotonic time at which this process entered `main`, for the parent to subtract its spawn time from.
struct BenchChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-child", abstract: "One cold open of a bench store (used by bench).", shouldDisplay: false
    )

    @Option var store: String
    @Option var keyFile: String
    @Option var tokens: Int
    @Option var population: Bench.PopulationProfile
    @Option var seed: UInt64
    @Option var query: Int?
    @Option var readerLookups: Int?
    @Option var stream: UInt64 = 0

    func run() throws {
        try BenchFailure.reporting {
            let population = SyntheticPopulation(accessTokens: tokens, profile: population.profile, seed: seed)
            if let readerLookups {
                return try BenchReaders.runChild(store: store, keyFile: keyFile, population: population, lookups: readerLookups, stream: stream)
            }
            guard let number = query else { throw BenchFailure("bench-child needs --query or --reader-lookups") }
            let (account, slot) = population.drawToken(number, stream: 0xC01D &+ seed)
            let hitQuery = population.hitQuery(account: account, slot: slot, number: number)
            let configuration = Configuration(directory: store, keySource: .keyFile(path: keyFile))
            let start = MonotonicClock.nanoseconds()
            let cache = try TokenStore.open(configuration)
            let result = try cache.silentLookup(hitQuery)
            let end = MonotonicClock.nanoseconds()
            guard result.outcome == .hit else {
                throw BenchFailure("the cold-open lookup gave \(result.outcome.rawValue), not hit")
            }
            print("\(end - start) \(CacheTool.mainEntered)")
        }
    }

    /// Runs one child and returns its two figures.
    static func spawn(place: BenchPlace, population: SyntheticPopulation, query: Int, profile: String) throws -> (openAndLookup: UInt64, processStart: UInt64) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try executablePath())
        process.arguments = arguments(place: place, population: population, profile: profile) + ["--query", "\(query)"]
        let output = Pipe()
        process.standardOutput = output
        let spawned = MonotonicClock.nanoseconds()
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { UInt64($0) }
        guard process.terminationReason == .exit, process.terminationStatus == 0, fields.count == 2, fields[1] >= spawned else {
            throw BenchFailure("the cold-open child process failed (status \(process.terminationStatus))")
        }
        return (fields[0], fields[1] - spawned)
    }

    /// The arguments that name the store and population of a bench run.
    static func arguments(place: BenchPlace, population: SyntheticPopulation, profile: String) -> [String] {
        [
            "bench-child", "--store", place.store, "--key-file", place.key, "--tokens", "\(population.accessTokens)",
            "--population", profile, "--seed", "\(population.seed)",
        ]
    }

    static func executablePath() throws -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}

/// A bench run that cannot give true figures (a lookup that does not give its outcome, a child that fails, a place
/// already in use): `cachetool: <message>` and exit 1. Library errors keep their own messages and exit codes.
struct BenchFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }

    static func reporting(_ body: () throws -> Void) throws {
        do {
            try Failure.reporting(body)
        } catch let failure as BenchFailure {
            Output.error(failure.message)
            throw ExitCode(1)
        }
    }
}
