import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The server a run measures, from the libpq URL the run was given (`Scripts/with-postgresql`'s
/// `TOKEN_CACHE_TEST_POSTGRESQL`, or `TOKEN_CACHE_TEST_POSTGRESQL_TCP`): what the one-blob design's connections and
/// the figures' queries need. The shared store parses the same URL itself (`Configuration.sharedStore`).
struct ServerAddress: Sendable {
    var url: String
    var user: String
    var database: String
    /// The socket file, for a Unix-socket URL (`host=/dir`).
    var socketPath: String?
    var host: String?
    var port: Int
    var password: String?

    var transport: String { socketPath != nil ? "Unix socket" : "TCP \(host ?? "")" }
    var isTCP: Bool { socketPath == nil }

    init(url: String) throws {
        guard let components = URLComponents(string: url) else { throw BenchError("cannot parse the server URL") }
        self.url = url
        user = components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        database = String(components.path.dropFirst())
        if database.isEmpty { database = user }
        let items = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        port = Int(items["port"] ?? "") ?? components.port ?? 5432
        if let directory = items["host"], directory.hasPrefix("/") {
            socketPath = "\(directory)/.s.PGSQL.\(port)"
        } else if let name = items["host"] ?? components.host, !name.isEmpty {
            host = name
        } else {
            socketPath = "/var/run/postgresql/.s.PGSQL.\(port)"
        }
        password = components.password
        if password == nil, let file = items["passfile"] { password = Self.password(in: file, user: user, database: database) }
    }

    /// The password of the first matching line of a libpq password file (`host:port:database:user:password`).
    static func password(in file: String, user: String, database: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ":", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5 else { continue }
            if (fields[2] == "*" || fields[2] == database) && (fields[3] == "*" || fields[3] == user) { return fields[4] }
        }
        return nil
    }

    /// The URL of a store in schema `schema`.
    func store(schema: String) -> String { url + (url.contains("?") ? "&" : "?") + "schema=" + schema }

    /// The same server as its superuser `postgres`, over the Unix socket (`Scripts/with-postgresql` trusts local
    /// socket connections): for CHECKPOINT and pg_walinspect, which the store's role may not use.
    func administrator(socketURL: String) throws -> ServerAddress {
        var admin = try ServerAddress(url: socketURL)
        admin.user = "postgres"
        admin.password = nil
        return admin
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One connection of postgres-nio, used as the shared store uses its own: a statement per call, the calling thread
/// blocked on the answer.
final class Connection: Sendable {
    let connection: PostgresConnection
    static let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

    init(_ address: ServerAddress) throws {
        var configuration: PostgresConnection.Configuration
        if let socket = address.socketPath {
            configuration = .init(unixSocketPath: socket, username: address.user, password: address.password, database: address.database)
        } else {
            configuration = .init(
                host: address.host ?? "127.0.0.1", port: address.port, username: address.user, password: address.password,
                database: address.database, tls: .disable
            )
        }
        configuration.options.additionalStartupParameters = [("application_name", "token-cache-bench")]
        connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: Int.random(in: 1...Int(Int32.max)),
            logger: Self.logger
        ).wait()
    }

    deinit { try? connection.close().wait() }

    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> PostgresQueryResult {
        try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Self.logger).wait()
    }

    func int(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> Int {
        guard let row = try query(sql, binds).first else { throw BenchError("no row: \(sql)") }
        return Int(try row.decode(Int64.self))
    }

    func string(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> String {
        guard let row = try query(sql, binds).first else { throw BenchError("no row: \(sql)") }
        return try row.decode(String.self)
    }
}

/// WAL written between two points: the whole, and the part that is full-page images (each page's first change
/// after a checkpoint is logged whole), from pg_walinspect when the server has it.
struct WALVolume: Codable, Sendable {
    var total_bytes: Int
    var record_bytes: Int?
    var full_page_image_bytes: Int?
}

/// The figures a run reads from the server itself, on a superuser connection.
final class ServerFigures: Sendable {
    let admin: Connection
    let walInspect: Bool
    /// The server's log (`Scripts/with-postgresql` names it), where each serialisation failure is an ERROR line.
    let logPath: String?

    init(admin: Connection, logPath: String?) {
        self.admin = admin
        walInspect = (try? admin.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect")) != nil
        self.logPath = logPath.flatMap { FileManager.default.isReadableFile(atPath: $0) ? $0 : nil }
    }

    var version: String { (try? admin.string("SHOW server_version")) ?? "unknown" }

    func walPosition() throws -> String { try admin.string("SELECT pg_current_wal_insert_lsn()::text") }

    func wal(from start: String) throws -> WALVolume {
        // A switch-free flush so that pg_walinspect may read up to the insert position.
        let end = try admin.string("SELECT pg_current_wal_flush_lsn()::text")
        var binds = PostgresBindings()
        binds.append(end)
        binds.append(start)
        let total = try admin.int("SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint", binds)
        guard walInspect else { return WALVolume(total_bytes: total) }
        var range = PostgresBindings()
        range.append(start)
        range.append(end)
        guard let row = try? admin.query(
            "SELECT coalesce(sum(record_size), 0)::bigint, coalesce(sum(fpi_size), 0)::bigint FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, false)", range
        ).first, let (records, images) = try? row.decode((Int64, Int64).self) else { return WALVolume(total_bytes: total) }
        return WALVolume(total_bytes: total, record_bytes: Int(records), full_page_image_bytes: Int(images))
    }

    func checkpoint() { _ = try? admin.query("CHECKPOINT") }

    /// `pg_total_relation_size` of a table (heap, TOAST, indexes).
    func size(of table: String) throws -> Int {
        var binds = PostgresBindings()
        binds.append(table)
        return try admin.int("SELECT pg_total_relation_size($1::regclass)::bigint", binds)
    }

    /// `table`'s bytes as heap, TOAST and indexes, which add up to ``size(of:)``.
    func parts(of table: String) throws -> RelationParts {
        var binds = PostgresBindings()
        binds.append(table)
        guard let row = try admin.query(
            """
            SELECT (pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0))::bigint,
                   coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)::bigint, pg_indexes_size(c.oid)::bigint
              FROM pg_class c WHERE c.oid = $1::regclass
            """, binds
        ).first else { throw BenchError("no table \(table)") }
        let (heap, toast, indexes) = try row.decode((Int64, Int64, Int64).self)
        return RelationParts(heap_bytes: Int(heap), toast_bytes: Int(toast), index_bytes: Int(indexes))
    }

    /// The server log's current length, to count what later lines say.
    func logOffset() -> UInt64 {
        guard let logPath, let attributes = try? FileManager.default.attributesOfItem(atPath: logPath) else { return 0 }
        return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Lines of the server log after `offset` that contain `text`; nil when the log cannot be read.
    func logLines(after offset: UInt64, containing text: String) -> Int? {
        guard let logPath, let handle = FileHandle(forReadingAtPath: logPath) else { return nil }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        let data = (try? handle.readToEnd()) ?? Data()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").count { $0.contains(text) }
    }

    /// Transactions committed and rolled back in the run's database so far (pg_stat_database).
    func transactionCounts(database: String) -> (commits: Int, rollbacks: Int)? {
        _ = try? admin.query("SELECT pg_stat_clear_snapshot()")
        var binds = PostgresBindings()
        binds.append(database)
        guard let row = try? admin.query("SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = $1", binds).first,
            let (commits, rollbacks) = try? row.decode((Int64, Int64).self)
        else { return nil }
        return (Int(commits), Int(rollbacks))
    }
}

/// What the server spent on an operation's statements, from its own log: every statement's parse, bind (which plans
/// an unnamed statement) and execute, as `log_min_duration_statement = 0` reports them.
struct ServerTime: Codable, Sendable {
    var operations: Int
    var statements_per_operation: Double
    var parse_ns_per_operation: UInt64
    var bind_ns_per_operation: UInt64
    var execute_ns_per_operation: UInt64
    var server_ns_per_operation: UInt64 { parse_ns_per_operation + bind_ns_per_operation + execute_ns_per_operation }
}

extension ServerFigures {
    /// Runs `body` (which returns how many operations it did) with every statement's duration logged, and returns
    /// what the server's log says they cost; nil when the log cannot be read. The logging costs time itself: run it
    /// apart from the timed passes.
    func serverTime(_ body: () throws -> Int) throws -> ServerTime? {
        var log = ""
        return try serverTime(log: &log, body)
    }

    /// As ``serverTime(_:)``, also returning the log's lines of the pass in `log`.
    func serverTime(log: inout String, _ body: () throws -> Int) throws -> ServerTime? {
        guard logPath != nil else { return nil }
        try admin.query("ALTER SYSTEM SET log_min_duration_statement = 0")
        try admin.query("SELECT pg_reload_conf()")
        usleep(300_000)  // every server process rereads its configuration before its next statement
        let offset = logOffset()
        let operations: Int
        do { operations = try body() } catch {
            _ = try? admin.query("ALTER SYSTEM RESET log_min_duration_statement")
            _ = try? admin.query("SELECT pg_reload_conf()")
            throw error
        }
        let end = logOffset()
        try admin.query("ALTER SYSTEM RESET log_min_duration_statement")
        try admin.query("SELECT pg_reload_conf()")
        guard operations > 0, let handle = FileHandle(forReadingAtPath: logPath!) else { return nil }
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let text = String(decoding: try handle.read(upToCount: Int(end - offset)) ?? Data(), as: UTF8.self)
        log = text
        var sums = ["parse": 0.0, "bind": 0.0, "execute": 0.0]
        var executes = 0
        for line in text.split(separator: "\n") {
            guard let range = line.range(of: "duration: ") else { continue }
            let rest = line[range.upperBound...]
            let fields = rest.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
            guard fields.count >= 3, let milliseconds = Double(fields[0]) else { continue }
            if rest.contains("ALTER SYSTEM") || rest.contains("pg_reload_conf") { continue }
            let phase = fields[2] == "statement:" ? "execute" : String(fields[2])
            guard sums[phase] != nil else { continue }
            sums[phase]! += milliseconds * 1e6
            if phase == "execute" { executes += 1 }
        }
        let per = { (phase: String) in UInt64(sums[phase]! / Double(operations)) }
        return ServerTime(
            operations: operations, statements_per_operation: Double(executes) / Double(operations), parse_ns_per_operation: per("parse"),
            bind_ns_per_operation: per("bind"), execute_ns_per_operation: per("execute")
        )
    }
}

/// A statement the server logged with its parameters, to run again on a connection of the benchmark's own.
struct LoggedStatement {
    var sql: String
    var parameters: [String]

    /// The first statement of `log` (named or not) whose text starts with `prefix`, with the parameters its DETAIL
    /// line gives.
    init?(in log: String, startingWith prefix: String) {
        let lines = log.split(separator: "\n")
        guard let index = lines.firstIndex(where: { $0.contains("execute ") && $0.contains(": " + prefix) }), index + 1 < lines.count,
            let sqlStart = lines[index].range(of: ": " + prefix)
        else { return nil }
        sql = prefix + String(lines[index][sqlStart.upperBound...])
        let detail = lines[index + 1]
        guard detail.contains("DETAIL:  parameters: ") else { return nil }
        var parameters: [String] = []
        var rest = detail[detail.range(of: "parameters: ")!.upperBound...]
        while let open = rest.range(of: " = '") {
            guard let close = rest[open.upperBound...].firstIndex(of: "'") else { return nil }
            parameters.append(String(rest[open.upperBound..<close]))
            rest = rest[rest.index(after: close)...]
        }
        self.parameters = parameters
    }

    /// The elements of an array parameter as the server logs it (`{2,5}`, `{"\\x0102","\\x03"}`).
    static func elements(_ parameter: String) -> [String] {
        let inner = parameter.dropFirst().dropLast()
        guard !inner.isEmpty else { return [] }
        return inner.split(separator: ",").map { element in
            var text = String(element)
            if text.hasPrefix("\"") { text = String(text.dropFirst().dropLast()) }
            return text.replacingOccurrences(of: "\\\\", with: "\\")
        }
    }

    static func bytes(_ parameter: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var digits = parameter.utf8.dropFirst(2).makeIterator()
        while let high = digits.next(), let low = digits.next() { bytes.append(nibble(high) << 4 | nibble(low)) }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8 { digit <= 57 ? digit - 48 : (digit | 0x20) - 87 }
}
