import Foundation
import NIOCore
import PostgresNIO
import TokenCache
import TokenCacheMSAL
import TokenCachePostgreSQL
@_spi(Benchmarking) import TokenCacheBenchmarking

/// The run's settings (command line; `make bench-shared` passes its variables).
struct Options: Sendable {
    var sizes = [10_000, 100_000]
    /// Sizes measured for the size gate only (``SizeRun/runLarge()``): population, sizes on the server, lookups.
    var largeSizes: [Int] = []
    /// A previous run's JSON whose sizes this run does not measure are kept in the output.
    var merge: String?
    var lookups = 5_000
    var writes = 500
    var throughputSeconds = 4.0
    var mixSeconds = 10.0
    var writeEvery = 10
    var lostWrites = 25
    var hosts = 4
    var connections = 4
    /// Sign-outs the invalidation delay is measured on, each of a user of its own.
    var invalidations = 50
    var output = "results/shared-store.json"
    var markdown: String? = "results/shared-store.md"
}

/// The servers' addresses and what reads figures off the server.
struct Environment: Sendable {
    /// The headline transport: TCP on loopback when the run has it, else the Unix socket.
    var primary: ServerAddress
    /// Every transport the lookups are measured over (the primary first).
    var transports: [ServerAddress]
    var figures: ServerFigures
    var keyFile: String
}

/// Everything measured at one population size.
struct SizeRun {
    let options: Options
    let environment: Environment
    let workload: Workload
    var tokens: Int { workload.population.accessTokens }
    var ourSchema: String { "bench_store_\(tokens)" }
    var anchorSchema: String { "bench_blob_\(tokens)" }
    var primary: ServerAddress { environment.primary }
    var figures: ServerFigures { environment.figures }

    init(tokens: Int, options: Options, environment: Environment) {
        self.options = options
        self.environment = environment
        workload = Workload(accessTokens: tokens)
    }

    func configuration(_ address: ServerAddress, timeout: Duration = Configuration.defaultStoreTimeout) throws -> Configuration {
        try Configuration.sharedStore(
            address.store(schema: ourSchema), keySource: .keyFile(path: environment.keyFile), timeout: timeout, connections: options.connections
        )
    }

    /// The population, the one-blob table beside it, their sizes on the server, and how long each takes to populate:
    /// the start of every size's run.
    func populate() throws -> (store: TokenStore, table: AnchorTable, result: SizeResult) {
        let population = workload.population
        note("[\(tokens)] populating the shared store (\(Format.count(population.recordCount)) records)")
        try figures.admin.query("DROP SCHEMA IF EXISTS \"\(ourSchema)\" CASCADE")
        var started = Clock.now()
        // The bulk load's transactions, on a busy machine, may wait on a checkpoint past the store's deadline: its own
        // store waits longer. What is measured afterwards uses the default deadline, as a host would.
        let loader = try TokenStore.create(try configuration(primary, timeout: .seconds(120)))
        try population.populate(loader, recordsPerTransaction: 10_000, layout: .keyOrdered)
        let populateSeconds = Double(Clock.now() - started) / 1e9
        let store = try TokenStore.open(try configuration(primary))

        note("[\(tokens)] loading the one-blob table (one MSAL cache per user, from the library's MSAL export)")
        started = Clock.now()
        let table = AnchorTable(schema: anchorSchema)
        let (blobSizes, exportBytes) = try loadAnchor(into: table)
        let anchorSeconds = Double(Clock.now() - started) / 1e9
        note("[\(tokens)] VACUUM ANALYZE of both tables")
        try figures.admin.query("VACUUM ANALYZE \"\(ourSchema)\".records")
        try figures.admin.query("VACUUM ANALYZE \(table.table)")

        var result = SizeResult(
            access_tokens: tokens, accounts: population.accounts, records: population.recordCount, populate_seconds: populateSeconds,
            anchor_load_seconds: anchorSeconds
        )
        let oursBytes = try figures.size(of: "\"\(ourSchema)\".records")
        let anchorBytes = try figures.size(of: table.table)
        let json = blobSizes.reduce(0, +)
        result.size = SizeComparison(
            ours_bytes: oursBytes, anchor_table_bytes: anchorBytes, msal_json_bytes: json, msal_export_bytes: exportBytes,
            ours_over_msal_json: Double(oursBytes) / Double(json), ours_over_anchor_table: Double(oursBytes) / Double(anchorBytes),
            blob_bytes: ByteDistribution(blobSizes), ours_parts: try figures.parts(of: "\"\(ourSchema)\".records"),
            anchor_table_parts: try figures.parts(of: table.table)
        )

        let spaces = ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]
        for row in try figures.admin.query(
            "SELECT space, count(*), avg(octet_length(key) + octet_length(value))::bigint FROM \"\(ourSchema)\".records GROUP BY space ORDER BY space"
        ) {
            let (space, count, mean) = try row.decode((Int16, Int64, Int64).self)
            let name = Int(space) < spaces.count ? spaces[Int(space)] : "space \(space)"
            result.size?.ours_rows[name] = RowSizes(rows: Int(count), mean_bytes: Int(mean))
        }
        return (store, table, result)
    }

    /// A size measured for the size gate only: the population and its sizes (``populate()``), then the lookups of
    /// both designs over the headline transport (one caller timed one by one, then 1 and ``Options/hosts`` callers
    /// at once). The writes, host processes, lost updates, notification placement and invalidation delay are not
    /// measured: they do not depend on the population's size the way lookups and sizes do, and at a million tokens
    /// their setup alone would take longer than the rest of the run.
    func runLarge() throws -> SizeResult {
        let (_, table, populated) = try populate()
        var result = populated
        // A bulk load leaves gigabytes of dirty pages and a table autovacuum has not analysed yet: settle both first,
        // so that the lookups measure the store, not the load's aftermath.
        note("[\(tokens)] vacuum (analyze) and checkpoint before measuring")
        _ = try figures.admin.query("VACUUM (ANALYZE) \"\(ourSchema)\".records")
        _ = try figures.admin.query("CHECKPOINT")
        result.load_average.append(Machine.load)
        let queries = workload.queries(count: options.lookups, stream: 0x1)
        try measureRoundTripAndLookups(over: primary, queries, into: &result)
        note("[\(tokens)] lookups of the one-blob design")
        result.lookup_anchor = try lookupAnchor(table, queries)
        note("[\(tokens)] the lookup's statement: server time and plan")
        (result.server_time["lookup_ours"], result.lookup_statement) = try lookupServerTime(queries, sample: 200)
        result.load_average.append(Machine.load)
        return result
    }

    /// The floor of a statement (`SELECT 1` on a connection of its own) and the store's lookups over `address`.
    func measureRoundTripAndLookups(over address: ServerAddress, _ queries: [SilentLookupQuery], into result: inout SizeResult) throws {
        note("[\(tokens)] round trip and lookups over \(address.transport)")
        let connection = try Connection(address)
        result.round_trip[address.transport] = try measureSerial(count: options.lookups, warmup: 100) { _ in try connection.query("SELECT 1") }
        result.lookup_ours[address.transport] = try lookupOurs(address, queries)
    }

    /// The server's time per lookup over `sample` lookups (every statement's phases logged), and the lookup's
    /// statement replayed and its plan explained.
    func lookupServerTime(_ queries: [SilentLookupQuery], sample: Int) throws -> (ServerTime?, StatementReplay?) {
        let lookupStore = try TokenStore.open(try configuration(primary))
        for query in queries.prefix(20) { _ = try lookupStore.silentLookup(query) }
        var lookupLog = ""
        let time = try figures.serverTime(log: &lookupLog) {
            for query in queries.prefix(sample) { _ = try lookupStore.silentLookup(query) }
            return sample
        }
        return (time, try replay(LoggedStatement(in: lookupLog, startingWith: "SELECT * FROM (SELECT x.i::int4")))
    }

    func run() throws -> SizeResult {
        let (store, table, populated) = try populate()
        var result = populated
        result.load_average.append(Machine.load)
        // 1. Lookups.
        let queries = workload.queries(count: options.lookups, stream: 0x1)
        for address in environment.transports { try measureRoundTripAndLookups(over: address, queries, into: &result) }
        note("[\(tokens)] lookups of the one-blob design")
        result.lookup_anchor = try lookupAnchor(table, queries)
        (result.anchor_deserialize, result.anchor_serialize) = try anchorCodec(table, queries)

        // 2. Durable writes.
        note("[\(tokens)] writes: ingest (transaction), ingest (write plan), one-blob read-modify-write")
        let writes = (0..<(options.writes + 20)).map { workload.write(number: $0) }
        result.write_ours = try writeOurs(writes) { write in try store.ingest(TokenResponse(json: write.json), context: write.context) }
        result.write_ours_planned = try writeOurs(writes) { write in
            _ = try blocking { try await store.ingestThroughWritePlan(TokenResponse(json: write.json), context: write.context) }
        }
        result.write_ours_planned_note =
            "TokenStore.ingestThroughWritePlan (TokenCacheBenchmarking SPI): the package's ingestApplyingPlan, one fetch + one apply_plan call"
        result.write_anchor = try writeAnchor(table, writes)

        // Where the server's time goes: each operation again, every statement's phases logged.
        note("[\(tokens)] server time per operation (statement log)")
        let sample = 200
        (result.server_time["lookup_ours"], result.lookup_statement) = try lookupServerTime(queries, sample: sample)
        let anchorConnection = try Connection(primary)
        let requests = queries.prefix(sample).map(Workload.anchorRequest)
        result.server_time["lookup_anchor"] = try figures.serverTime {
            for request in requests { _ = try table.lookup(request, on: anchorConnection) }
            return sample
        }
        let replayed = writes.suffix(50)
        result.server_time["write_ours"] = try figures.serverTime {
            for write in replayed { try store.ingest(TokenResponse(json: write.json), context: write.context) }
            return replayed.count
        }
        result.server_time["write_ours_planned"] = try figures.serverTime {
            for write in replayed {
                _ = try blocking { try await store.ingestThroughWritePlan(TokenResponse(json: write.json), context: write.context) }
            }
            return replayed.count
        }
        result.server_time["write_anchor"] = try figures.serverTime {
            for write in replayed { try table.writeToken(write.anchor, on: anchorConnection) }
            return replayed.count
        }

        // 3. Four hosts.
        note("[\(tokens)] \(options.hosts) host processes, \(Int(options.mixSeconds)) s each design")
        result.hosts_ours = try hosts(.mixOurs)
        result.hosts_anchor = try hosts(.mixAnchor)

        // 4. Lost updates on one user.
        note("[\(tokens)] lost updates: \(options.hosts) writers × \(options.lostWrites) tokens of one user")
        result.lost_ours = try lost(.lostOurs, store: store, table: table)
        result.lost_anchor = try lost(.lostAnchor, store: store, table: table)

        // 5. Where the change notification is sent.
        note("[\(tokens)] change notification placement: \(options.hosts) writers, \(Int(options.throughputSeconds)) s per placement, twice")
        do { result.notify_placement = try notifyPlacement(writes) } catch { note("[\(tokens)] change notification placement failed: \(error)") }

        // 6. How soon another host's L1 drops what a write removed (last: it signs users out).
        note("[\(tokens)] invalidation delay: \(options.invalidations) sign-outs seen by another host's L1")
        do { result.invalidation_delay = try invalidationDelay(queries, trials: options.invalidations) } catch {
            note("[\(tokens)] invalidation delay failed: \(error)")
        }
        result.load_average.append(Machine.load)
        return result
    }

    // MARK: Population of the one-blob table

    /// Exports each user's records as MSAL JSON (the library's export, secrets included), adds the app metadata MSAL
    /// keeps in every user's cache, and stores it compact under the user's home account id. Returns the blobs'
    /// sizes and the export's bytes.
    ///
    /// The export reads a local store of the same population (the same records: the population is deterministic),
    /// made for it in a temporary directory: exporting 10,000 users from the shared store would take a minute of
    /// statements, from a local store a few seconds.
    func loadAnchor(into table: AnchorTable) throws -> (blobs: [Int], exportBytes: Int) {
        let population = workload.population
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tc-bench-shared-export-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Configuration(directory: directory, keySource: .keyFile(path: environment.keyFile))
        configuration.maximumMapSize = 64 << 30  // a million tokens take more than the default cap
        let store = try TokenStore.create(configuration)
        try population.populate(store, recordsPerTransaction: 20_000, layout: .keyOrdered)
        let appMetadata = Dictionary(
            uniqueKeysWithValues: SyntheticPopulation.appMetadata.map { metadata -> (String, [String: String]) in
                var entry = ["client_id": metadata.clientID, "environment": metadata.environment]
                if let family = metadata.familyID { entry["family_id"] = family }
                return ("appmetadata-\(metadata.environment)-\(metadata.clientID)", entry)
            }
        )
        let parts = 2
        let connections = try (0..<parts).map { _ in try Connection(primary) }
        try table.create(on: connections[0])
        let results = onThreads(parts) { part -> Result<(blobs: [Int], exportBytes: Int), any Error> in
            Result {
                let connection = connections[part]
                try connection.query("BEGIN")
                var blobs: [Int] = [], exportBytes = 0
                for index in stride(from: part, to: population.accounts, by: parts) {
                    let homeAccountID = population.account(index).homeAccountID
                    let (document, _) = try store.exportMSAL(
                        options: MSALExportOptions(includeSecrets: true, filter: RecordFilter(homeAccountID: homeAccountID))
                    )
                    exportBytes += document.count
                    guard var cache = try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any] else {
                        throw BenchError("an export is not a JSON object")
                    }
                    cache["AppMetadata"] = appMetadata
                    let blob = try CompactJSON.data(cache)
                    blobs.append(blob.count)
                    try table.insert(partition: homeAccountID, blob: blob, on: connection)
                }
                try connection.query("COMMIT")
                return (blobs, exportBytes)
            }
        }
        var blobs: [Int] = [], exportBytes = 0
        for result in results {
            let part = try result.get()
            blobs += part.blobs
            exportBytes += part.exportBytes
        }
        return (blobs, exportBytes)
    }

    // MARK: Lookups

    func lookupOurs(_ address: ServerAddress, _ queries: [SilentLookupQuery]) throws -> LookupResult {
        let store = try TokenStore.open(try configuration(address))
        return try lookups(count: queries.count) { _, i in try store.silentLookup(queries[i % queries.count]).outcome == .hit }
    }

    func lookupAnchor(_ table: AnchorTable, _ queries: [SilentLookupQuery]) throws -> LookupResult {
        let requests = queries.map(Workload.anchorRequest)
        let connections = try (0..<options.hosts).map { _ in try Connection(primary) }
        return try lookups(count: requests.count) { caller, i in try table.lookup(requests[i % requests.count], on: connections[caller]) != nil }
    }

    /// A design's lookups, `hit(caller, i)` each: `count` one after another (after 200 untimed), then for
    /// ``Options/throughputSeconds`` by 1 and by ``Options/hosts`` callers at once, each caller on queries of its own.
    func lookups(count: Int, _ hit: @escaping @Sendable (_ caller: Int, _ i: Int) throws -> Bool) throws -> LookupResult {
        var nonHits = 0
        let serial = try measureSerial(count: count, warmup: 200) { i in if try !hit(0, i) { nonHits += 1 } }
        let callers = [1, options.hosts].map { callers in
            measureCallers(callers, seconds: options.throughputSeconds) { caller, i in
                guard try hit(caller, caller * 7_919 + i) else { throw BenchError("not a hit") }
            }
        }
        return LookupResult(serial: serial, non_hits: nonHits, callers: callers)
    }

    /// The one-blob lookup's own work without the server: blobs fetched first, then deserialized (and the token
    /// found) from memory; and the serialization a write adds.
    func anchorCodec(_ table: AnchorTable, _ queries: [SilentLookupQuery]) throws -> (Latency, Latency) {
        let connection = try Connection(primary)
        let sample = queries.prefix(1_000).map(Workload.anchorRequest)
        let blobs = try sample.map { request -> Data in
            guard let buffer = try table.blob(request.partition, on: connection) else { throw BenchError("a user has no blob") }
            return Data(buffer.readableBytesView)
        }
        var documents: [[String: Any]] = []
        let deserialize = try measureSerial(count: blobs.count, warmup: 0) { i in
            guard let document = try JSONSerialization.jsonObject(with: blobs[i]) as? [String: Any],
                AnchorTable.find(sample[i], in: document) != nil
            else { throw BenchError("a blob does not answer its request") }
            documents.append(document)
        }
        let serialize = try measureSerial(count: documents.count, warmup: 0) { i in
            _ = try CompactJSON.data(documents[i])
        }
        return (deserialize, serialize)
    }

    /// The lookup's one statement as the store sends it (prepared once per connection, its generic plan kept),
    /// replayed on a connection of its own, alternating with the statement the store sent before it was prepared: a
    /// `UNION ALL` of one subquery per range, with the ranges' bounds as values, sent unnamed (parsed and planned at
    /// every call). Same ranges, same rows; both timed in one loop, one of each in turn.
    func replay(_ statement: LoggedStatement?) throws -> StatementReplay? {
        // The fetch's values: the ranges (4 arrays), the counts (3), whether it reads the revision floor, the buckets
        // whose versions it reads.
        guard let statement, statement.parameters.count == 9 else { return nil }
        let table = "\"\(ourSchema)\".records"
        let spaces = LoggedStatement.elements(statement.parameters[0]).map { Int16($0) ?? 0 }
        let firsts = LoggedStatement.elements(statement.parameters[1]).map(LoggedStatement.bytes)
        let bounds = LoggedStatement.elements(statement.parameters[2]).map(LoggedStatement.bytes)
        let limits = LoggedStatement.elements(statement.parameters[3]).map { Int32($0) ?? 0 }
        guard spaces.count == firsts.count, spaces.count == bounds.count, spaces.count == limits.count,
            LoggedStatement.elements(statement.parameters[4]).isEmpty
        else { throw BenchError("the logged lookup is not a plan of ranges only") }
        // Before: the ranges as subqueries, bounds as values.
        var binds = PostgresBindings()
        var parts: [String] = []
        for index in spaces.indices {
            binds.append(spaces[index])
            binds.append(ByteBuffer(bytes: firsts[index]))
            var sql = "(SELECT \(index)::int4 AS r, key, value, version FROM \(table) WHERE space = $\(binds.count - 1) AND key >= $\(binds.count)"
            if limits[index] > 0 {
                sql += " ORDER BY key LIMIT \(limits[index]))"
            } else {
                if bounds[index].count <= 511 {
                    binds.append(ByteBuffer(bytes: bounds[index]))
                    sql += " AND key < $\(binds.count)"
                }
                sql += ")"
            }
            parts.append(sql)
        }
        let before = "SELECT * FROM (" + parts.joined(separator: " UNION ALL ") + ") AS fetched ORDER BY r, key"
        // After: the store's statement and values, prepared as the store prepares it, on a reader's settings.
        let values = [
            Self.value(spaces), Self.value(firsts.map { ByteBuffer(bytes: $0) }), Self.value(bounds.map { ByteBuffer(bytes: $0) }),
            Self.value(limits), Self.value([Int16]()), Self.value([Int16]()), Self.value([ByteBuffer]()),
            PostgresData(bool: statement.parameters[7] == "t"),
            Self.value(LoggedStatement.elements(statement.parameters[8]).map { ByteBuffer(bytes: LoggedStatement.bytes($0)) }),
        ]
        let connection = try Connection(primary)
        try connection.query("SET plan_cache_mode = force_generic_plan")
        let prepared = try connection.connection.prepare(query: statement.sql).wait()
        var rows = 0, bytes = 0
        for row in try prepared.execute(values).wait() {
            // A record's row, not a bucket version's (whose key is NULL): the statement before read no versions.
            guard row.dropFirst().first?.bytes != nil else { continue }
            rows += 1
            bytes += row.dropFirst().prefix(2).reduce(0) { $0 + ($1.bytes?.readableBytes ?? 0) }
        }
        let beforeRows = try connection.query(before, binds).reduce(0) { count, _ in count + 1 }
        guard beforeRows == rows else { throw BenchError("the two statements return \(beforeRows) and \(rows) rows") }
        let count = max(1_000, options.lookups / 2)
        var timings: [[UInt64]] = [[], []]
        for i in 0..<(count + 100) {
            for arm in i % 2 == 0 ? [0, 1] : [1, 0] {
                let start = Clock.now()
                if arm == 0 { try connection.query(before, binds) } else { _ = try prepared.execute(values).wait() }
                if i >= 100 { timings[arm].append(Clock.now() - start) }
            }
        }
        // The plan the prepared statement runs: its generic plan (planned without the values), explained with them.
        let literals = statement.parameters.map { "'\($0)'" }.joined(separator: ", ")
        try connection.query("PREPARE bench_fetch AS \(statement.sql)")
        let plan = try connection.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE bench_fetch (\(literals))").map {
            try $0.decode(String.self)
        }
        let plans = try connection.query("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name <> 'bench_fetch'").first
            .map { try $0.decode((Int64, Int64).self) }
        return StatementReplay(
            ranges: spaces.count, rows: rows, bytes: bytes, before_unnamed: Latency(timings[0]), after_prepared: Latency(timings[1]),
            generic_plans: Int(plans?.0 ?? -1), custom_plans: Int(plans?.1 ?? -1), plan: plan
        )
    }

    /// `array` in the server's binary format, as a prepared statement's execution takes its values.
    static func value<Element: PostgresArrayEncodable>(_ array: [Element]) -> PostgresData {
        var buffer = ByteBuffer()
        try! array.encode(into: &buffer, context: .default)
        return PostgresData(type: [Element].psqlType, formatCode: [Element].psqlFormat, value: buffer)
    }

    // MARK: Writes

    /// Rows and bytes one ingest writes: the rows whose version changed, measured on `writes` one by one, each
    /// ingested by `ingest`.
    func oursPayload(_ writes: ArraySlice<Workload.Write>, _ ingest: (Workload.Write) throws -> Void) throws -> (rows: Double, bytes: Double) {
        let connection = try Connection(primary)
        var rows = 0, bytes = 0
        let table = "\"\(ourSchema)\".records"
        for write in writes {
            let before = try connection.int("SELECT coalesce(max(version), 0) FROM \(table)")
            try ingest(write)
            var binds = PostgresBindings()
            binds.append(Int64(before))
            guard let row = try connection.query(
                "SELECT count(*), coalesce(sum(octet_length(key) + octet_length(value)), 0)::bigint FROM \(table) WHERE version > $1", binds
            ).first else { throw BenchError("no row") }
            let (count, sum) = try row.decode((Int64, Int64).self)
            rows += Int(count)
            bytes += Int(sum)
        }
        return (Double(rows) / Double(writes.count), Double(bytes) / Double(writes.count))
    }

    /// Durable writes through `ingest`, one after another: the first 20 of `writes` measure what a write writes, the
    /// rest are timed, with the WAL they wrote after a checkpoint.
    func writeOurs(_ writes: [Workload.Write], _ ingest: @escaping @Sendable (Workload.Write) throws -> Void) throws -> WriteResult {
        let payload = try oursPayload(writes.prefix(20), ingest)
        let timed = writes.dropFirst(20)
        figures.checkpoint()
        let start = try figures.walPosition()
        var errors = 0
        let latency = measureSerial(count: timed.count, warmup: 0) { i in
            do { try ingest(timed[timed.startIndex + i]) } catch { errors += 1 }
        }
        return WriteResult(
            latency: latency, rows_per_write: payload.rows, payload_bytes_per_write: payload.bytes, payload_sample: 20,
            wal_per_write: try perWrite(try figures.wal(from: start), timed.count), errors: errors
        )
    }

    func writeAnchor(_ table: AnchorTable, _ writes: [Workload.Write]) throws -> WriteResult {
        let connection = try Connection(primary)
        let timed = writes.dropFirst(20)
        figures.checkpoint()
        let start = try figures.walPosition()
        var sizes: [Int] = [], errors = 0
        let latency = measureSerial(count: timed.count, warmup: 0) { i in
            do { sizes.append(try table.writeToken(timed[timed.startIndex + i].anchor, on: connection)) } catch { errors += 1 }
        }
        let bytes = sizes.isEmpty ? 0 : Double(sizes.reduce(0, +)) / Double(sizes.count)
        return WriteResult(
            latency: latency, rows_per_write: 1, payload_bytes_per_write: bytes, payload_sample: sizes.count,
            wal_per_write: try perWrite(try figures.wal(from: start), timed.count), errors: errors
        )
    }

    func perWrite(_ wal: WALVolume, _ count: Int) throws -> WALVolume {
        WALVolume(
            total_bytes: wal.total_bytes / count, record_bytes: wal.record_bytes.map { $0 / count },
            full_page_image_bytes: wal.full_page_image_bytes.map { $0 / count }
        )
    }

    // MARK: Several hosts

    func task(_ role: HostTask.Role, host: Int, startAt: UInt64) -> HostTask {
        let url = (role == .mixOurs || role == .lostOurs) ? primary.store(schema: ourSchema) : primary.url
        return HostTask(
            role: role, host: host, url: url, anchorSchema: anchorSchema, keyFile: environment.keyFile, accessTokens: tokens, startAt: startAt,
            seconds: options.mixSeconds, writeEvery: options.writeEvery, writes: options.lostWrites, lostAccount: 0
        )
    }

    func hosts(_ role: HostTask.Role) throws -> HostsResult {
        let startAt = Clock.now() + 2_500_000_000
        let tasks = (0..<options.hosts).map { task(role, host: $0, startAt: startAt) }
        let logOffset = figures.logOffset()
        let before = figures.transactionCounts(database: primary.database)
        let reports = try Host.spawn(tasks)
        usleep(300_000)  // the hosts' server sessions report their statistics as they end
        let after = figures.transactionCounts(database: primary.database)
        let operations = reports.reduce(0) { $0 + $1.lookups + $1.writes }
        var errors: [String: Int] = [:]
        for report in reports { errors.merge(report.errors, uniquingKeysWith: +) }
        return HostsResult(
            hosts: options.hosts, kind: role == .mixOurs ? "processes, one TokenStore each" : "processes, one connection each",
            seconds: options.mixSeconds, operations: operations, operations_per_second: Double(operations) / options.mixSeconds,
            lookups: reports.reduce(0) { $0 + $1.lookups }, lookup_hits: reports.reduce(0) { $0 + $1.lookup_hits },
            writes: reports.reduce(0) { $0 + $1.writes }, errors: errors, caller_retries: reports.reduce(0) { $0 + $1.caller_retries },
            serialization_failures_logged: figures.logLines(after: logOffset, containing: "could not serialize access"),
            serialization_failures_same_row: figures.logLines(after: logOffset, containing: "could not serialize access due to concurrent"),
            rollbacks: before.flatMap { b in after.map { $0.rollbacks - b.rollbacks } },
            lookup_latency: Latency(reports.flatMap { $0.lookup_samples ?? [] }), write_latency: Latency(reports.flatMap { $0.write_samples ?? [] }),
            per_host: reports.map(\.withoutSamples)
        )
    }

    func lost(_ role: HostTask.Role, store: TokenStore, table: AnchorTable) throws -> LostResult {
        let startAt = Clock.now() + 2_500_000_000
        let tasks = (0..<options.hosts).map { task(role, host: $0, startAt: startAt) }
        let homeAccountID = workload.population.account(0).homeAccountID
        let logOffset = figures.logOffset()
        let reports = try Host.spawn(tasks)
        let present: Int
        if role == .lostOurs {
            present = try store.list(AccessToken.self, filter: RecordFilter(homeAccountID: homeAccountID)).records
                .count { $0.entity.target.hasPrefix(Workload.lostScopePrefix) }
        } else {
            present = try table.countTokens(of: homeAccountID, targetPrefix: Workload.lostScopePrefix, on: try Connection(primary))
        }
        let acknowledged = reports.reduce(0) { $0 + $1.writes }
        var errors: [String: Int] = [:]
        for report in reports { errors.merge(report.errors, uniquingKeysWith: +) }
        return LostResult(
            kind: role == .lostOurs ? "shared store: ingest, one TokenStore per process" : "one blob per user: read, deserialize, add, serialize, UPDATE",
            writers: options.hosts, writes_per_writer: options.lostWrites, attempted: options.hosts * options.lostWrites,
            acknowledged: acknowledged, present: present, lost: acknowledged - present,
            caller_retries: reports.reduce(0) { $0 + $1.caller_retries }, errors: errors,
            serialization_failures_logged: figures.logLines(after: logOffset, containing: "could not serialize access"),
            serialization_failures_same_row: figures.logLines(after: logOffset, containing: "could not serialize access due to concurrent"),
            seconds: reports.map(\.seconds).max() ?? 0, write_latency: Latency(reports.flatMap { $0.write_samples ?? [] })
        )
    }
}
