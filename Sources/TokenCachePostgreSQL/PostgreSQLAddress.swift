import Foundation
package import TokenCacheStorage

/// Where a shared store lives: a PostgreSQL database and the schema in it that holds the store's tables, parsed from a
/// libpq connection URL, so that the address an operator gives `psql` is the one they give `cachetool --store`.
///
/// `postgresql://[user[:password]@][host][:port][/database][?parameter=value&…]` (or `postgres://`), with libpq's
/// parameters `host` (a directory: a Unix socket there), `port`, `user`, `password`, `dbname`, `sslmode`,
/// `sslrootcert`, `passfile`, `application_name` and `connect_timeout`, and one of the store's own: `schema`, the
/// schema that holds the store (`token_cache` by default; several stores may share one database). Unknown parameters
/// are refused, naming them, rather than ignored: a misspelt `sslmode` must not connect without TLS.
///
/// The password never leaves this value except into the connection's authentication: ``location`` and every message
/// omit it.
package struct PostgreSQLAddress: Sendable, Equatable {
    /// How the connection is protected, libpq's `sslmode` values.
    package enum TLSMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"

        /// Whether the server's certificate is checked against a trusted root (and, for `verify-full`, its name).
        var verifiesCertificate: Bool { self == .verifyCA || self == .verifyFull }
        /// Whether a connection without TLS is refused.
        var requiresTLS: Bool { self == .require || verifiesCertificate }
    }

    /// A TCP host name or address; nil for a Unix socket.
    package var host: String?
    /// The directory of the server's Unix socket (libpq's `host` starting with `/`); nil for TCP.
    package var socketDirectory: String?
    package var port: Int = 5432
    package var user: String
    package var password: String?
    package var database: String
    package var schema: String = PostgreSQLAddress.defaultSchema
    package var tls: TLSMode
    /// A PEM file of roots to verify the server against, instead of the system's.
    package var rootCertificate: String?
    /// A libpq password file (`hostname:port:database:username:password` lines) to take the password from.
    package var passwordFile: String?
    package var applicationName = "token-cache"
    /// Seconds a connection attempt may take.
    package var connectTimeout: Int?

    package static let defaultSchema = "token_cache"
    static let schemes = ["postgresql://", "postgres://"]

    /// Whether `text` is a PostgreSQL URL rather than a directory.
    package static func isURL(_ text: String) -> Bool { schemes.contains { text.lowercased().hasPrefix($0) } }

    /// The socket file (`.s.PGSQL.<port>` in the socket directory).
    package var socketPath: String? { socketDirectory.map { "\($0)/.s.PGSQL.\(port)" } }

    /// Whether the server is on this machine: a Unix socket or a loopback address, where TLS is not required.
    package var isLocal: Bool { host.map(Self.loopback) ?? true }

    /// The address for messages and `cachetool info`: the URL without its password or password file.
    package var location: String {
        var text = "postgresql://\(Self.escape(user))@"
        if let host { text += (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
        text += "/\(Self.escape(database))"
        var parameters: [String] = []
        if let socketDirectory { parameters.append("host=\(Self.escape(socketDirectory))") }
        if socketDirectory != nil, port != 5432 { parameters.append("port=\(port)") }
        if schema != Self.defaultSchema { parameters.append("schema=\(Self.escape(schema))") }
        if tls != Self.defaultTLS(local: isLocal) { parameters.append("sslmode=\(tls.rawValue)") }
        return parameters.isEmpty ? text : text + "?" + parameters.joined(separator: "&")
    }

    /// libpq's default is `prefer`, which an attacker on the path downgrades; here a server off this machine is
    /// verified by default, and a local one needs no TLS.
    static func defaultTLS(local: Bool) -> TLSMode { local ? .disable : .verifyFull }

    /// Parses `url`.
    /// - Parameter environment: Where `PGUSER`, `PGPASSFILE` and `USER` are looked up when the URL leaves them out.
    /// - Throws: `.invalidArgument` naming what is wrong (never the password).
    package init(parsing url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StorageError) {
        guard let scheme = Self.schemes.first(where: { url.lowercased().hasPrefix($0) }) else {
            throw Self.invalid("it does not start with postgresql:// or postgres://")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        if rest.contains("#") { throw Self.invalid("a fragment (#…) has no meaning in a PostgreSQL URL") }
        var authority = rest
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        }
        var user: String? = nil
        var password: String? = nil
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                user = try Self.unescape(credentials[..<colon], "the user name")
                password = try Self.unescape(credentials[credentials.index(after: colon)...], "the password")
            } else {
                user = try Self.unescape(credentials, "the user name")
            }
        }
        var host: String? = nil
        var port: Int? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw Self.invalid("an IPv6 host misses its closing ]") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst()) } else if !after.isEmpty {
                throw Self.invalid("unexpected text after the IPv6 host")
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = try Self.unescape(authority[..<colon], "the host")
            port = try Self.port(authority[authority.index(after: colon)...])
        } else if !authority.isEmpty {
            host = try Self.unescape(authority, "the host")
        }
        if authority.contains(",") { throw Self.invalid("several hosts are not supported; name the primary") }
        var database = path.isEmpty ? nil : try Self.unescape(path, "the database name")
        var socketDirectory: String? = nil
        var tls: TLSMode? = nil
        var schema = Self.defaultSchema
        var rootCertificate: String? = nil
        var passwordFile: String? = nil
        var applicationName: String? = nil
        var connectTimeout: Int? = nil
        var seen: Set<String> = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.unescape(parts[0], "a parameter name")
            let value = parts.count == 2 ? try Self.unescape(parts[1], "the value of \(name)") : ""
            guard seen.insert(name).inserted else { throw Self.invalid("the parameter \(name) is given twice") }
            switch name {
            case "host":
                // As in libpq, the parameter overrides the host before the path.
                if value.hasPrefix("/") { socketDirectory = value; host = nil } else { host = value; socketDirectory = nil }
            case "port": port = try Self.port(Substring(value))
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            case "schema": schema = value
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Self.invalid("sslmode \(Self.quoted(value)) is none of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "sslrootcert": rootCertificate = value
            case "passfile": passwordFile = value
            case "application_name": applicationName = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0, seconds <= 3600 else {
                    throw Self.invalid("connect_timeout \(Self.quoted(value)) is not a number of seconds from 1 to 3600")
                }
                connectTimeout = seconds
            default:
                throw Self.invalid(
                    "the parameter \(Self.quoted(name)) is not one this store knows (host, port, user, password, dbname, schema, "
                        + "sslmode, sslrootcert, passfile, application_name, connect_timeout)"
                )
            }
        }
        if host == nil, socketDirectory == nil { socketDirectory = "/var/run/postgresql" }  // libpq's default on Debian
        guard let user = user ?? environment["PGUSER"] ?? environment["USER"], !user.isEmpty else {
            throw Self.invalid("it names no user, and neither PGUSER nor USER is set")
        }
        try Self.checkSchemaName(schema)
        self.host = host
        self.socketDirectory = socketDirectory
        self.port = port ?? 5432
        self.user = user
        self.password = password
        self.database = database ?? user
        self.schema = schema
        self.rootCertificate = rootCertificate
        self.passwordFile = passwordFile ?? environment["PGPASSFILE"]
        if let applicationName { self.applicationName = applicationName }
        self.connectTimeout = connectTimeout
        self.tls = tls ?? Self.defaultTLS(local: host.map(Self.loopback) ?? true)
        if !isLocal, !self.tls.requiresTLS {
            throw Self.invalid(
                "sslmode=\(self.tls.rawValue) would send tokens' sealed records and the password to \(host ?? "") without TLS that an "
                    + "attacker on the path cannot strip; use sslmode=verify-full (the default off this machine), verify-ca or require"
            )
        }
    }

    /// The longest schema name: 63 bytes (PostgreSQL's identifier limit) less the channel's `token_cache_` prefix.
    static let maximumSchemaLength = 63 - "token_cache_".utf8.count

    static func loopback(_ host: String) -> Bool {
        ["localhost", "::1"].contains(host.lowercased()) || host.hasPrefix("127.")
    }

    /// A schema name the store's SQL can quote safely: lower-case letters, digits and underscores, not starting with a
    /// digit or `pg_`, and at most 51 bytes: the store's notification channel, `token_cache_<schema>`, is an identifier
    /// too, and `pg_notify` refuses a channel name beyond PostgreSQL's 63 bytes (every write would fail).
    static func checkSchemaName(_ name: String) throws(StorageError) {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
        guard !name.isEmpty, name.utf8.count <= maximumSchemaLength, allowed, !(name.utf8.first! >= 0x30 && name.utf8.first! <= 0x39),
            !name.hasPrefix("pg_")
        else {
            throw invalid(
                "the schema \(quoted(name)) is not 1 to \(maximumSchemaLength) lower-case letters, digits and underscores starting with a letter or "
                    + "underscore (and not pg_…)"
            )
        }
    }

    static func port(_ text: Substring) throws(StorageError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else { throw invalid("the port \(quoted(String(text))) is not 1 to 65535") }
        return port
    }

    static func unescape(_ text: Substring, _ what: String) throws(StorageError) -> String {
        guard let decoded = String(text).removingPercentEncoding else { throw invalid("\(what) has a malformed %-escape") }
        return decoded
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~/"))) ?? text
    }

    /// A value quoted for a message, its control characters escaped (a URL may come from anywhere).
    static func quoted(_ text: String) -> String {
        "\"" + text.unicodeScalars.map { scalar in
            switch scalar {
            case "\"", "\\": "\\" + String(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: "\\u{\(String(scalar.value, radix: 16))}"
            default: String(scalar)
            }
        }.joined() + "\""
    }

    static func invalid(_ reason: String) -> StorageError {
        StorageError(.invalidArgument, "the PostgreSQL URL is not usable: \(reason)")
    }
}
