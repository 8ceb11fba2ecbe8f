import Foundation
import TestSupport
import Testing
import TokenCacheStorage
import TokenCacheLMDB
import TokenCachePostgreSQL

@testable import TokenCache
import TokenCacheRecords

/// Unique canaries: if one ever shows up in a file or an output, a secret or an identifier leaked.
enum Canary {
    static let secret = "CANARY-SECRET-7f3e9a1c2b4d"
    static let username = "canary.user.5d8e2f@example.com"
    static let homeAccountID = "canary-uid-91c4.canary-utid-27ab"
    static let clientID = "canary-client-3e7d"
    static let realm = "canary-realm-b8f0"
    static let scope = "canary.scope.read"

    static var all: [String] { [secret, username, homeAccountID, clientID, realm, scope] }
}

/// The record backends the domain tests run on: every rule must hold on each.
enum TestBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case lmdb
    case memory
    /// A schema of its own in the run's private PostgreSQL server, when the run has one (`make test` always does).
    case postgresql

    static var allCases: [TestBackend] { PostgreSQLTestServer.url == nil ? [.lmdb, .memory] : [.lmdb, .memory, .postgresql] }

    var testDescription: String { rawValue }

    /// Whether `revision` is what a record new under its key gets: 1 in a store of files, one above the store's
    /// revision floor on a server (FORMAT.md §2.2), so there only above 1.
    func isFirst(_ revision: UInt64) -> Bool { self == .postgresql ? revision > 1 : revision == 1 }
}

/// A new store with its own key file in a temporary directory (the store itself there too, or in memory).
struct TestStore {
    let root: String
    var backend: TestBackend = .lmdb
    /// The records of the store `with` opened (an in-memory store is reachable only through it).
    private(set) var records: (any RecordBackend)?

    /// The shared store's URL, for a PostgreSQL store: a schema of its own.
    let sharedStoreURL: String?
    /// The cipher the store is created with (nil: the machine's preferred one).
    var cipher: StoreCipher? = nil

    init(root: String, backend: TestBackend = .lmdb) {
        self.root = root
        self.backend = backend
        sharedStoreURL = backend == .postgresql ? PostgreSQLTestServer.uniqueStoreURL("store") : nil
    }

    var directory: String {
        switch backend {
        case .memory: Configuration.inMemoryDirectory
        case .lmdb: root + "/store"
        case .postgresql: try! Configuration.sharedStore(sharedStoreURL!, keySource: .keyFile(path: keyFile), timeout: PostgreSQLTestServer.timeout).directory
        }
    }
    var keyFile: String { root + "/keys/key" }
    var configuration: Configuration {
        var configuration =
            if let sharedStoreURL {
                try! Configuration.sharedStore(sharedStoreURL, keySource: .keyFile(path: keyFile), timeout: PostgreSQLTestServer.timeout)
            } else {
                Configuration(directory: directory, keySource: .keyFile(path: keyFile))
            }
        configuration.cipher = cipher
        return configuration
    }

    /// The store opened read-only: as it is on disk, with no upgrade and no placement run.
    func openReadOnly() throws -> TokenStore {
        var readOnly = configuration
        readOnly.readOnly = true
        return try TokenStore.open(readOnly)
    }

    static func with<R>(
        _ backend: TestBackend = .lmdb, cipher: StoreCipher? = nil, _ body: (TestStore, TokenStore) throws -> R
    ) throws -> R {
        try withTemporaryDirectory { root in
            var store = TestStore(root: root, backend: backend)
            store.cipher = cipher
            try KeyFile.create(at: store.keyFile)
            let cache = try TokenStore.create(store.configuration)
            store.records = cache.store.backend
            return try body(store, cache)
        }
    }

    /// The shared LMDB environment of the store (the same instance the cache uses: one per file per process).
    func environment() throws -> Environment {
        try Environment.open(directory: directory, databases: KeySpace.allCases.map(\.name))
    }

    /// The store's record backend: the one `with` opened, else the store directory's LMDB environment.
    func recordBackend() throws -> any RecordBackend {
        if let records { return records }
        let options = LMDBRecordBackend.Options(
            directory: directory, initialMapSize: configuration.initialMapSize, maximumMapSize: configuration.maximumMapSize,
            readOnly: false, allowNetworkFilesystem: false
        )
        return try LMDBRecordBackend.open(options)
    }

    /// Raw (key, value) pairs of a key space, bypassing all crypto.
    func rawEntries(_ name: KeySpace) throws -> [([UInt8], [UInt8])] {
        try recordBackend().read { txn in
            var entries: [([UInt8], [UInt8])] = []
            try txn.forEach(in: name, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                entries.append((Array(key), Array(value)))
                return true
            } } }
            return entries
        }
    }

    func rawPut(_ name: KeySpace, key: [UInt8], value: [UInt8]) throws {
        try recordBackend().write { txn in try value.withUnsafeBytes { try txn.put(in: name, key: key, value: $0) } }
    }

    func rawDelete(_ name: KeySpace, key: [UInt8]) throws {
        try recordBackend().write { txn in _ = try txn.delete(in: name, key: key) }
    }

    /// Every byte of every file under the store directory.
    func allFileBytes() throws -> [(String, Data)] {
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory)
        return try files.map { ($0, try Data(contentsOf: URL(fileURLWithPath: directory + "/" + $0))) }
    }
}

/// Entities with every modelled field set (an on-behalf-of partition only when asked: it is part of the key), plus
/// unknown fields of each JSON type.
enum Samples {
    static let now = ReferenceTime.now
    static let home = "uid1.utid1"
    static let environment = "login.microsoftonline.com"
    static let client = "b3f5c2d4-0000-4000-8000-00000000c11e"
    static let extras: [String: JSONValue] = [
        "x_string": .string("kept"), "x_int": .integer(42), "x_double": .double(1.5), "x_bool": .bool(true), "x_null": .null,
        "x_array": .array([.integer(1), .string("two")]), "x_object": .object(["nested": .object(["deep": .bool(false)])]),
    ]

    static func accessToken(
        home: String = home, client: String = client, realm: String = "utid1", target: String = "User.Read Mail.Read",
        secret: String = "at-secret", environment: String = environment, partition: String? = nil
    ) -> AccessToken {
        AccessToken(
            homeAccountID: home, environment: environment, clientID: client, realm: realm, target: target,
            secret: Secret(secret), cachedAt: now, expiresOn: now + 3600, extendedExpiresOn: now + 7200, refreshOn: now + 1800,
            tokenType: "Bearer", keyID: nil, userAssertionHash: partition, additionalFields: extras
        )
    }

    /// `partition`: an on-behalf-of partition (`user_assertion_hash`), which is part of the token's key.
    static func refreshToken(
        home: String = home, client: String = client, family: String? = "1", secret: String = "rt-secret", partition: String? = nil
    ) -> RefreshToken {
        RefreshToken(
            homeAccountID: home, environment: environment, clientID: client, secret: Secret(secret), familyID: family,
            target: "User.Read offline_access", realm: "utid1", lastModificationTime: now, userAssertionHash: partition,
            expiresOn: now + 86_400, additionalFields: extras
        )
    }

    static func idToken(home: String = home, client: String = client, realm: String = "utid1", secret: String = "header.payload.sig") -> IDToken {
        IDToken(homeAccountID: home, environment: environment, clientID: client, realm: realm, secret: Secret(secret), additionalFields: extras)
    }

    static func account(home: String = home, realm: String = "utid1", username: String = "user@example.com") -> Account {
        Account(
            homeAccountID: home, environment: environment, realm: realm, localAccountID: "oid-1", username: username,
            authorityType: "MSSTS", accountSource: "authorization_code", name: "A User", givenName: "A", familyName: "User",
            middleName: "M", alternativeAccountID: "alt", clientInfo: "eyJ1aWQiOiJ1aWQxIn0", additionalFields: extras
        )
    }

    static func appMetadata(client: String = client, family: String? = "1") -> AppMetadata {
        AppMetadata(clientID: client, environment: environment, familyID: family, additionalFields: extras)
    }
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

extension Data {
    func contains(_ text: String) -> Bool { range(of: Data(text.utf8)) != nil }
}

/// The code of the `TokenCacheError` `body` throws, or nil if it throws nothing (or something else).
func errorCode<R>(_ body: () throws -> R) -> TokenCacheError.Code? {
    do {
        _ = try body()
        return nil
    } catch let error as TokenCacheError {
        return error.code
    } catch {
        return nil
    }
}
