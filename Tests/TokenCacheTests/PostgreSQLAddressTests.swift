import Foundation
import TestSupport
import Testing
@testable import TokenCachePostgreSQL
import TokenCacheStorage

/// A shared store's address as an operator writes it: libpq's URL form, TLS by default off this machine, unknown
/// parameters refused, the password never in a message; and libpq's password file.
@Suite struct PostgreSQLAddressTests {
    static let environment = ["USER": "os-user"]

    static func parse(_ url: String) throws -> PostgreSQLAddress { try PostgreSQLAddress(parsing: url, environment: environment) }

    static func refusal(_ url: String) -> String? {
        do { _ = try parse(url) } catch let error as StorageError { return error.message } catch { return "\(error)" }
        return nil
    }

    @Test func aTCPURLNamesHostPortUserDatabaseAndVerifiesTLSByDefault() throws {
        let address = try Self.parse("postgresql://tokens@db.internal:6432/app")
        #expect(address.host == "db.internal" && address.port == 6432 && address.user == "tokens" && address.database == "app")
        #expect(address.socketDirectory == nil && address.tls == .verifyFull && address.schema == "token_cache")
        #expect(address.location == "postgresql://tokens@db.internal:6432/app")
    }

    @Test func aSocketURLNeedsNoTLSAndKeepsItsDirectoryInTheLocation() throws {
        let address = try Self.parse("postgres://tokens@/app?host=/run/postgresql&port=5433&schema=farm_a")
        #expect(address.host == nil && address.socketDirectory == "/run/postgresql" && address.socketPath == "/run/postgresql/.s.PGSQL.5433")
        #expect(address.tls == .disable && address.isLocal)
        #expect(address.location == "postgresql://tokens@/app?host=/run/postgresql&port=5433&schema=farm_a")
    }

    @Test func defaultsComeFromLibpqsRules() throws {
        let address = try Self.parse("postgresql://")
        #expect(address.user == "os-user" && address.database == "os-user" && address.socketDirectory == "/var/run/postgresql")
        let loopback = try Self.parse("postgresql://u@127.0.0.1/db")
        #expect(loopback.isLocal && loopback.tls == .disable)
        let ipv6 = try Self.parse("postgresql://u@[2001:db8::1]:7000/db?sslmode=require")
        #expect(ipv6.host == "2001:db8::1" && ipv6.port == 7000 && ipv6.tls == .require)
        #expect(ipv6.location == "postgresql://u@[2001:db8::1]:7000/db?sslmode=require")
        // As in libpq, a host parameter overrides the host before the path.
        let overridden = try Self.parse("postgresql://u@db.internal/d?host=/run/pg")
        #expect(overridden.host == nil && overridden.socketDirectory == "/run/pg" && overridden.tls == .disable)
        let escaped = try Self.parse("postgresql://us%40er@h/d%20b?application_name=web%201")
        #expect(escaped.user == "us@er" && escaped.database == "d b" && escaped.applicationName == "web 1")
    }

    @Test func thePasswordNeverReachesTheLocationNorAMessage() throws {
        let address = try Self.parse("postgresql://tokens:CANARY-PW@db.internal/app?sslmode=verify-ca")
        #expect(address.password == "CANARY-PW" && !address.location.contains("CANARY-PW"))
        let refused = Self.refusal("postgresql://tokens:CANARY-PW@db.internal/app?sslmode=disable")
        #expect(refused != nil && !(refused ?? "").contains("CANARY-PW"))
    }

    @Test func whatCannotBeUsedIsRefusedNamingWhy() {
        let cases: [(String, String)] = [
            ("mysql://u@h/d", "does not start with postgresql://"),
            ("postgresql://u@h/d?sslmode=disable", "sslmode=disable would send"),
            ("postgresql://u@h/d?sslmode=prefer", "sslmode=prefer would send"),
            ("postgresql://u@h/d?sslmode=verify", "sslmode \"verify\" is none of"),
            ("postgresql://u@h/d?sslmod=require", "the parameter \"sslmod\" is not one this store knows"),
            ("postgresql://u@h/d?port=1&port=2", "the parameter port is given twice"),
            ("postgresql://u@h:0/d", "the port \"0\" is not 1 to 65535"),
            ("postgresql://u@h1,h2/d", "several hosts are not supported"),
            ("postgresql://u@h/d#x", "a fragment"),
            ("postgresql://u@h/d?schema=Farm", "the schema \"Farm\" is not"),
            // 52 bytes: its channel, token_cache_<schema>, would pass PostgreSQL's 63 and every write would fail.
            ("postgresql://u@h/d?schema=" + String(repeating: "s", count: 52), "is not 1 to 51 lower-case letters"),
            ("postgresql://u@h/d?schema=pg_catalog", "the schema \"pg_catalog\" is not"),
            ("postgresql://u@h/d?schema=a%22b", "the schema \"a\\\"b\" is not"),
            ("postgresql://u@h/d?connect_timeout=0", "connect_timeout \"0\" is not"),
            ("postgresql://u@/d?host=/run/pg&host=db", "the parameter host is given twice"),
            ("postgresql://u@[::1/d", "closing ]"),
        ]
        for (url, reason) in cases {
            let refusal = Self.refusal(url)
            #expect(refusal?.contains(reason) == true, "\(url): \(refusal ?? "accepted")")
        }
    }

    @Test func aPasswordFileLineMatchesByHostPortDatabaseAndUserWithWildcardsAndEscapes() throws {
        try withTemporaryDirectory { root in
            let file = root + "/pgpass"
            let lines = [
                "# comment",
                "other:5432:app:tokens:wrong-host",
                "db.internal:6432:*:tokens:first\\:match",
                "*:*:*:*:catch-all",
            ]
            try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            chmod(file, 0o600)
            var address = try Self.parse("postgresql://tokens@db.internal:6432/app?passfile=\(file)")
            #expect(try PostgreSQLPasswordFile.password(for: address) == "first:match")
            address = try Self.parse("postgresql://tokens@/app?host=/run/pg&passfile=\(file)")
            #expect(try PostgreSQLPasswordFile.password(for: address) == "catch-all")
            chmod(file, 0o644)
            let refused = try #require(throws: StorageError.self) { try PostgreSQLPasswordFile.password(for: address) }
            #expect(refused.code == .insecurePermissions && refused.message.contains("chmod 600"))
            let missing = try Self.parse("postgresql://tokens@/app?host=/run/pg&passfile=\(root)/none")
            #expect(throws: StorageError.self) { try PostgreSQLPasswordFile.password(for: missing) }
        }
    }
}
