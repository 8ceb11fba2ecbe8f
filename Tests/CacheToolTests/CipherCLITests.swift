import Foundation
import Testing
import TokenCache

/// The cipher through `cachetool`: chosen at `init`, shown by `info` and `verify`, converted by `rekey`, and a
/// `TOKEN_CACHE_CIPHER` that names none refused rather than ignored.
@Suite struct CipherCLITests {
    static func json(_ run: CacheToolRun) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.output)")
    }

    @Test func initChoosesTheCipherAndRekeyConvertsIt() throws {
        try CLIStore.with { store in
            let created = try store.run(["init", "--cipher", "xchacha20-poly1305"])
            #expect(created.status == 0 && created.stdout.contains("(format v4, xchacha20-poly1305)"), "\(created.output)")
            #expect(try store.run(["sample-data"]).status == 0)
            #expect(try Self.json(store.run(["info", "--json"]))["cipher"] as? String == "xchacha20-poly1305")

            // Asked again with the other cipher, init says how to convert, and changes nothing.
            let again = try store.run(["init", "--cipher", "aes-256-gcm"])
            #expect(again.status == 0 && again.stdout.contains("`cachetool rekey --rotate-data-key --cipher aes-256-gcm` converts it"))

            let rotated = try store.run(["rekey", "--rotate-data-key", "--cipher", "aes-256-gcm", "--json"])
            #expect(rotated.status == 0, "\(rotated.output)")
            #expect(try Self.json(rotated)["cipher"] as? String == "aes-256-gcm")
            let verified = try Self.json(store.run(["verify", "--json"]))
            let keys = try #require(verified["data_keys"] as? [[String: Any]])
            // The first key, kept for the blind index and sealing nothing, now names the new cipher too.
            #expect(keys.map { $0["cipher"] as? String } == ["aes-256-gcm", "aes-256-gcm"])
            #expect(keys.map { $0["active"] as? Bool } == [false, true])
            #expect(try store.run(["verify"]).stdout.contains("(active, aes-256-gcm)"))
            let info = try Self.json(store.run(["info", "--json"]))
            #expect(info["cipher"] as? String == "aes-256-gcm" && info["data_key_rotation_pending"] as? Bool == false)
        }
    }

    @Test func aCipherNamedWrongIsAUsageError() throws {
        try CLIStore.with { store in
            let bad = try store.run(["init"], extra: ["TOKEN_CACHE_CIPHER": "xchacha20"])
            #expect(bad.status == 64 && bad.stderr.contains("TOKEN_CACHE_CIPHER=xchacha20 is not a cipher"), "\(bad.output)")
            #expect(!FileManager.default.fileExists(atPath: store.directory))
            // Case and spaces do not matter.
            let spelled = try store.run(["init"], extra: ["TOKEN_CACHE_CIPHER": " XChaCha20-Poly1305 "])
            #expect(spelled.status == 0 && spelled.stdout.contains("xchacha20-poly1305"), "\(spelled.output)")
            #expect(try store.run(["init", "--cipher", "chacha"]).status == 64)
            let alone = try store.run(["rekey", "--cipher", "aes-256-gcm", "--rotate-data-key", "--new-key-file", store.root + "/k2"])
            #expect(alone.status == 64)
        }
    }
}
