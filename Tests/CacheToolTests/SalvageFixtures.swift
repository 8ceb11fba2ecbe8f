import Foundation
import Testing
import TokenCache
import TokenCacheLMDB

/// The stores and readings the CLI tests of `salvage` share.
enum SalvageFixtures {
    static let databases = ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]

    /// A small store of every kind (salvage's time goes to its 327,680 key ranges, whatever the store holds).
    static func seeded(_ store: CLIStore, accessTokens: Int = 2_000) throws {
        #expect(try store.run(["init"]).status == 0)
        let host = "login.microsoftonline.com"
        try TokenStore.open(store.configuration).write { writer in
            for index in 0..<accessTokens {
                try writer.put(AccessToken(
                    homeAccountID: "u\(index).t", environment: host, clientID: "c", realm: "t", target: "s.read",
                    secret: Secret("salvage-\(index)"), cachedAt: 1_800_000_000, expiresOn: 4_000_000_000
                ))
            }
            for index in 0..<300 {
                try writer.put(RefreshToken(homeAccountID: "u\(index).t", environment: host, clientID: "c", secret: Secret("rt-\(index)")))
                try writer.put(Account(homeAccountID: "u\(index).t", environment: host, realm: "t", localAccountID: "u\(index)",
                                       username: "u\(index)@example.com", authorityType: "MSSTS"))
                try writer.put(IDToken(homeAccountID: "u\(index).t", environment: host, clientID: "c", realm: "t", secret: Secret("id-\(index)")))
            }
        }
    }

    /// Every entry of the record databases in `directory`, sealed as stored, by database.
    static func entries(_ directory: String) throws -> [String: Set<[UInt8]>] {
        let environment = try Environment.open(directory: directory, databases: databases)
        var result: [String: Set<[UInt8]>] = [:]
        try environment.read { txn in
            for name in databases.dropFirst() {
                try txn.forEach(in: try #require(environment.database(name)), prefix: []) { key, value in
                    result[name, default: []].insert(Array(key) + [0xFF] + Array(value))
                    return true
                }
            }
        }
        return result
    }

    /// The range the salvage into `target` is reading, counted over all databases (index × 65,536 + prefix).
    static func readingPosition(_ target: String) -> Int? {
        guard let bytes = FileManager.default.contents(atPath: target + "/salvage.progress").map(Array.init), bytes.count >= 16 else { return nil }
        let numbers = (0..<4).map { index in bytes[index * 4..<index * 4 + 4].reduce(0) { $0 << 8 | Int($1) } }
        return numbers[2] == 0xFFFF_FFFF ? nil : numbers[2] << 16 | numbers[3]
    }
}
