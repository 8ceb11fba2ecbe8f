import Foundation
import NIOCore
import PostgresNIO

/// The design a shared store is compared with: Microsoft.Identity.Web's distributed token cache on a SQL table, one
/// row per user holding the user's whole serialized MSAL cache (the JSON document MSAL.NET and MSAL Python write:
/// sections AccessToken, RefreshToken, IdToken, Account, AppMetadata), under the partition key MSAL suggests for a
/// user's cache (the home account id).
///
/// Every access reads the blob and deserializes it (MSAL's BeforeAccess), a write then changes the in-memory cache,
/// serializes it whole and writes it back (AfterAccess): the last writer wins, there is no compare-and-swap. The
/// blob is stored as MSAL.NET writes it (compact JSON), unencrypted (Microsoft.Identity.Web encrypts only when told
/// to), through the same client (postgres-nio) and on the same server as the shared store.
struct AnchorTable: Sendable {
    let schema: String
    var table: String { "\"\(schema)\".user_cache" }

    func create(on connection: Connection) throws {
        try connection.query("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE")
        try connection.query("CREATE SCHEMA \"\(schema)\"")
        try connection.query("CREATE TABLE \(table) (partition text PRIMARY KEY, blob bytea NOT NULL)")
    }

    func insert(partition: String, blob: Data, on connection: Connection) throws {
        var binds = PostgresBindings()
        binds.append(partition)
        binds.append(ByteBuffer(bytes: blob))
        try connection.query("INSERT INTO \(table) (partition, blob) VALUES ($1, $2)", binds)
    }

    /// The user's blob as stored, nil when the user has none.
    func blob(_ partition: String, on connection: Connection) throws -> ByteBuffer? {
        var binds = PostgresBindings()
        binds.append(partition)
        guard let row = try connection.query("SELECT blob FROM \(table) WHERE partition = $1", binds).first else { return nil }
        return try row.decode(ByteBuffer.self)
    }

    /// BeforeAccess: the user's cache read and deserialized.
    func read(_ partition: String, on connection: Connection) throws -> [String: Any] {
        guard let buffer = try blob(partition, on: connection) else { return [:] }
        let object = try buffer.withUnsafeReadableBytes { bytes in
            try JSONSerialization.jsonObject(with: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none))
        }
        guard let document = object as? [String: Any] else { throw BenchError("a blob is not a JSON object") }
        return document
    }

    /// AfterAccess: the whole cache serialized and written back over whatever is there (plain UPDATE); returns the
    /// bytes written.
    @discardableResult
    func write(_ partition: String, _ document: [String: Any], on connection: Connection) throws -> Int {
        let data = try CompactJSON.data(document)
        var binds = PostgresBindings()
        binds.append(partition)
        binds.append(ByteBuffer(bytes: data))
        try connection.query("UPDATE \(table) SET blob = $2 WHERE partition = $1", binds)
        return data.count
    }

    /// A silent lookup as MSAL answers it from the user's deserialized cache: the first access token of the client,
    /// environment and realm whose scopes include the requested ones, not cached in the future, with at least 300 s
    /// left. Returns its secret's length (nil for no usable token).
    func lookup(_ request: AnchorRequest, on connection: Connection) throws -> Int? {
        let document = try read(request.partition, on: connection)
        return Self.find(request, in: document)
    }

    static func find(_ request: AnchorRequest, in document: [String: Any]) -> Int? {
        guard let tokens = document["AccessToken"] as? [String: Any] else { return nil }
        for case let (_, entry as [String: Any]) in tokens {
            guard (entry["client_id"] as? String) == request.clientID, (entry["environment"] as? String) == request.environment,
                (entry["realm"] as? String)?.lowercased() == request.realm.lowercased(),
                (entry["home_account_id"] as? String) == request.partition
            else { continue }
            let target = Set(((entry["target"] as? String) ?? "").lowercased().split(separator: " ").map(String.init))
            guard request.scopes.allSatisfy({ target.contains($0.lowercased()) }) else { continue }
            let cachedAt = Int64((entry["cached_at"] as? String) ?? "") ?? .max
            let expiresOn = Int64((entry["expires_on"] as? String) ?? "") ?? 0
            guard cachedAt <= request.now, expiresOn - request.now >= 300, let secret = entry["secret"] as? String else { continue }
            return secret.utf8.count
        }
        return nil
    }

    /// A token write as MSAL makes it: read and deserialize the user's cache, remove the access tokens of the same
    /// client, environment and realm whose scopes intersect the new one's, add the new one under its key, serialize
    /// and write the whole cache back. Returns the bytes written.
    @discardableResult
    func writeToken(_ token: AnchorAccessToken, on connection: Connection) throws -> Int {
        var document = try read(token.homeAccountID, on: connection)
        var tokens = (document["AccessToken"] as? [String: Any]) ?? [:]
        let scopes = Set(token.target.lowercased().split(separator: " ").map(String.init))
        for case let (key, entry as [String: Any]) in tokens {
            guard (entry["client_id"] as? String) == token.clientID, (entry["environment"] as? String) == token.environment,
                (entry["realm"] as? String)?.lowercased() == token.realm.lowercased()
            else { continue }
            let stored = Set(((entry["target"] as? String) ?? "").lowercased().split(separator: " ").map(String.init))
            if !stored.isDisjoint(with: scopes) { tokens[key] = nil }
        }
        tokens[token.key] = token.entry
        document["AccessToken"] = tokens
        return try write(token.homeAccountID, document, on: connection)
    }

    /// How many access tokens of the user's cache have a target starting with `prefix`.
    func countTokens(of partition: String, targetPrefix prefix: String, on connection: Connection) throws -> Int {
        let document = try read(partition, on: connection)
        let tokens = (document["AccessToken"] as? [String: Any]) ?? [:]
        return tokens.values.count { (($0 as? [String: Any])?["target"] as? String)?.hasPrefix(prefix) ?? false }
    }
}

/// A silent request to the one-blob design.
struct AnchorRequest: Sendable {
    var partition: String
    var clientID: String
    var environment: String
    var realm: String
    var scopes: [String]
    var now: Int64
}

/// An access token as MSAL serializes it, with its cache key.
struct AnchorAccessToken: Sendable {
    var homeAccountID: String
    var environment: String
    var clientID: String
    var realm: String
    var target: String
    var secret: String
    var cachedAt: Int64
    var expiresIn: Int64 = 3_599

    /// MSAL's key: `<home account id>-<environment>-accesstoken-<client id>-<realm>-<target>`, lower case.
    var key: String { "\(homeAccountID)-\(environment)-accesstoken-\(clientID)-\(realm)-\(target)".lowercased() }

    var entry: [String: Any] {
        [
            "home_account_id": homeAccountID, "environment": environment, "client_id": clientID, "realm": realm, "target": target,
            "secret": secret, "credential_type": "AccessToken", "cached_at": String(cachedAt), "expires_on": String(cachedAt + expiresIn),
            "extended_expires_on": String(cachedAt + 2 * expiresIn + 1), "refresh_on": String(cachedAt + expiresIn / 2),
        ]
    }
}
