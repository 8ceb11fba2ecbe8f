import Foundation

/// Everything one run measured: written as JSON to Benchmarks/results/shared-store.json and printed as tables.
struct RunResult: Codable {
    struct Meta: Codable {
        var date: String
        var cpu_model: String
        var cpus: Int
        var kernel: String
        var postgresql: String
        /// How the store and the one-blob design reach the server, for the headline figures.
        var transport: String
        /// Other transports the lookups were also measured over.
        var other_transports: [String]
        var parameters: Parameters
        var total_seconds: Double
    }

    struct Parameters: Codable {
        /// Every size in the results, the large ones too.
        var sizes: [Int]
        /// The sizes measured for the size gate only (``SizeResult/large``), in a run of their own.
        var large_sizes: [Int]?
        var lookups: Int
        var writes: Int
        var throughput_seconds: Double
        var mix_seconds: Double
        var mix_write_every: Int
        var lost_writes_per_host: Int
        var hosts: Int
        var connections_per_pool: Int
    }

    var meta: Meta
    var gates: Gates
    var sizes: [String: SizeResult]

    /// This run's sizes added to `earlier`'s (replacing any it measured too). The run's meta is `earlier`'s when this
    /// run measured large sizes only (the full sizes and their parameters are then `earlier`'s), else this run's; a
    /// full run keeps only `earlier`'s large sizes, each of which names its own run, so that no size measured in
    /// another full run is shown under this run's date.
    func merged(into earlier: RunResult) -> RunResult {
        let measuredLarge = Set(meta.parameters.large_sizes ?? [])
        let largeOnly = meta.parameters.sizes.allSatisfy(measuredLarge.contains)
        var merged = largeOnly ? earlier : self
        for (size, result) in earlier.sizes where sizes[size] == nil && (largeOnly || result.large != nil) {
            merged.sizes[size] = result
            merged.gates.results[size] = earlier.gates.results[size]
        }
        for (size, result) in sizes {
            merged.sizes[size] = result
            merged.gates.results[size] = gates.results[size]
        }
        let all = merged.sizes.keys.compactMap { Int($0) }.sorted()
        merged.meta.parameters.sizes = all
        let large = all.filter { merged.sizes[String($0)]?.large != nil }
        merged.meta.parameters.large_sizes = large.isEmpty ? nil : large
        return merged
    }
}

/// The gates of a lookup served by the server (p50 ≤ 0.5 ms, p99 ≤ 3 ms on loopback), judged on the headline transport.
struct Gates: Codable {
    var p50_limit_ns: UInt64 = 500_000
    var p99_limit_ns: UInt64 = 3_000_000
    var results: [String: GateResult] = [:]
}

struct GateResult: Codable {
    var p50_ns: UInt64
    var p99_ns: UInt64
    var p50_pass: Bool
    var p99_pass: Bool
}

struct SizeResult: Codable {
    var access_tokens: Int
    var accounts: Int
    var records: Int
    var populate_seconds: Double
    var anchor_load_seconds: Double
    /// The machine's 1-minute load average when this size's measurements began and ended.
    var load_average: [Double] = []

    /// A `SELECT 1` on a connection of its own, blocking the thread as the store does: the floor of any statement.
    var round_trip: [String: Latency] = [:]
    var lookup_ours: [String: LookupResult] = [:]
    var lookup_anchor: LookupResult?
    /// The one-blob design's lookup without the server: deserializing a blob held in memory, and finding the token.
    var anchor_deserialize: Latency?
    var anchor_serialize: Latency?
    var write_ours: WriteResult?
    var write_ours_planned: WriteResult?
    var write_ours_planned_note: String?
    var write_anchor: WriteResult?
    var hosts_ours: HostsResult?
    var hosts_anchor: HostsResult?
    var lost_ours: LostResult?
    var lost_anchor: LostResult?
    var size: SizeComparison?
    /// The lookup's statement replayed as sent and prepared.
    var lookup_statement: StatementReplay?
    /// The server's own time per operation, from its statement log (a separate, untimed pass of each operation).
    var server_time: [String: ServerTime] = [:]
    /// Durable write throughput of concurrent writers by where the change notification is sent.
    var notify_placement: NotifyPlacementResult?
    /// From a write's acknowledgement until another host's L1 stops serving what it changed.
    var invalidation_delay: InvalidationDelay?
    /// Set for a size measured for the size gate only (population, sizes, lookups), in a run of its own.
    var large: LargeRun?
}

/// The run a large size was measured in, when it was not the run of the other sizes.
struct LargeRun: Codable {
    var date: String
    /// From the start of the population to the end of the lookups.
    var seconds: Double
    var cpu_model: String
    var postgresql: String
    var transport: String
    /// The lookups timed one by one, and the seconds per caller count of the throughput figures.
    var lookups: Int
    var throughput_seconds: Double
}

/// Where a table's bytes are: `heap_bytes` + `toast_bytes` + `index_bytes` is its `pg_total_relation_size`.
struct RelationParts: Codable {
    /// The table's own pages (with its free-space and visibility maps).
    var heap_bytes: Int
    /// Its TOAST table and the TOAST table's index: the values stored out of line.
    var toast_bytes: Int
    /// Its indexes (the primary key).
    var index_bytes: Int
}

struct NotifyPlacementResult: Codable {
    struct Placement: Codable {
        var placement: String
        var writes: Int
        var writes_per_second: Double
        var latency: Latency
        var errors: Int
    }

    var writers: Int
    var seconds: Double
    var rounds: Int
    var placements: [Placement]
}

struct InvalidationDelay: Codable {
    var trials: Int
    var latency: Latency
    var max_ns: UInt64
    /// Trials in which the other host's first lookup after the sign-out returned was still served from its L1.
    var served_after_return: Int
}

struct LookupResult: Codable {
    var serial: Latency
    var non_hits: Int
    var callers: [Throughput]
}

struct WriteResult: Codable {
    var latency: Latency
    /// Rows written per write (the shared store: rows whose version the write set; the one-blob design: 1).
    var rows_per_write: Double
    /// Bytes of the rows' values (and keys) a write sends the server: the sealed records, or the whole blob.
    var payload_bytes_per_write: Double
    var payload_sample: Int
    /// WAL the server wrote per write over the timed writes, after a checkpoint (full-page images included).
    var wal_per_write: WALVolume?
    var errors: Int
}

struct HostsResult: Codable {
    var hosts: Int
    var kind: String
    var seconds: Double
    var operations: Int
    var operations_per_second: Double
    var lookups: Int
    var lookup_hits: Int
    var writes: Int
    var errors: [String: Int]
    var caller_retries: Int
    /// Serialisation failures the server logged (SQLSTATE 40001): transactions the store ran again by itself.
    var serialization_failures_logged: Int?
    /// Of those, the ones of two writers updating the same row (the rest: read/write dependencies).
    var serialization_failures_same_row: Int?
    /// Transactions the server rolled back meanwhile (pg_stat_database).
    var rollbacks: Int?
    var lookup_latency: Latency
    var write_latency: Latency
    var per_host: [HostReport]
}

struct LostResult: Codable {
    var kind: String
    var writers: Int
    var writes_per_writer: Int
    var attempted: Int
    var acknowledged: Int
    var present: Int
    /// Acknowledged writes that are not there at the end.
    var lost: Int
    var caller_retries: Int
    var errors: [String: Int]
    var serialization_failures_logged: Int?
    var serialization_failures_same_row: Int?
    var seconds: Double
    var write_latency: Latency
}

struct SizeComparison: Codable {
    /// pg_total_relation_size of the shared store's records table (heap, TOAST, primary key).
    var ours_bytes: Int
    /// The same of the one-blob table.
    var anchor_table_bytes: Int
    /// The population as MSAL JSON: the sum of the users' blobs (compact, as MSAL.NET writes them).
    var msal_json_bytes: Int
    /// The library's own MSAL export of each user (MSAL Python's indented layout), summed.
    var msal_export_bytes: Int
    var ours_over_msal_json: Double
    var ours_over_anchor_table: Double
    var blob_bytes: ByteDistribution
    /// The shared store's rows per kind of record: how many, and their mean key + value bytes.
    var ours_rows: [String: RowSizes] = [:]
    /// `ours_bytes` and `anchor_table_bytes` split into heap, TOAST and index (absent from results written before they were measured).
    var ours_parts: RelationParts?
    var anchor_table_parts: RelationParts?
}

struct RowSizes: Codable {
    var rows: Int
    var mean_bytes: Int
}

struct ByteDistribution: Codable {
    var p50: Int
    var p99: Int
    var mean: Int
    var max: Int
    var count: Int

    init(_ values: [Int]) {
        let sorted = values.sorted()
        func rank(_ p: Int) -> Int { sorted.isEmpty ? 0 : sorted[(p * sorted.count + 99) / 100 - 1] }
        p50 = rank(50)
        p99 = rank(99)
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / sorted.count
        max = sorted.last ?? 0
        count = sorted.count
    }
}

struct StatementReplay: Codable {
    /// The key ranges the statement reads.
    var ranges: Int
    /// The rows it returns, and their keys' and values' bytes.
    var rows: Int
    var bytes: Int
    /// Before: one subquery per range, sent unnamed (parsed and planned at every call).
    var before_unnamed: Latency
    /// After: the store's statement, prepared once, its generic plan kept (`plan_cache_mode = force_generic_plan`).
    var after_prepared: Latency
    /// How the server planned the prepared statement's executions (pg_prepared_statements).
    var generic_plans: Int
    var custom_plans: Int
    /// EXPLAIN ANALYZE of the prepared statement's generic plan, with the logged values.
    var plan: [String]
}
