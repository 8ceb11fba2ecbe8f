import Foundation
import TestSupport
import Testing

@testable import TokenCache

/// A seeded fuzzer of token responses through parsing, derivation and ingest into a real store.
///
/// Every input is a mutation of a complete AAD response carrying canary tokens: members removed, retyped or given
/// extreme values, id_token and client_info mangled, unknown members added, or the serialized bytes flipped,
/// inserted, deleted and truncated. For each input: either it is stored, or it fails with a `TokenCacheError`
/// whose message holds no canary, and the store is exactly as it was (no partial write). A crash or hang fails the
/// run.
///
/// `TOKEN_CACHE_FUZZ_INPUTS` (default 3,000) and `TOKEN_CACHE_FUZZ_SEED` (default fixed, so CI is reproducible)
/// set the size and the seed; a long run: `TOKEN_CACHE_FUZZ_INPUTS=200000 swift test --filter ResponseFuzzTests`.
@Suite struct ResponseFuzzTests {
    static let canaries = ["AT-CANARY-FUZZ-5150", "RT-CANARY-FUZZ-5151", "IDT-CANARY-FUZZ-5152"]

    private struct Fuzzer {
        var random: SplitMix64

        mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func chance(_ percent: Int) -> Bool { int(0..<100) < percent }

        mutating func string() -> String {
            let pieces = ["", "a", " ", "\u{0}", "\u{1b}[31m", "\u{202E}", "😀", "\u{FFFD}", "%00", "\\", "\"", ".", "..",
                          "openid", "User.Read", "common", "organizations", "consumers", "https://evil.example/", "\u{9B}"]
            var text = ""
            for _ in 0..<int(0..<6) { text += pieces[int(0..<pieces.count)] }
            if chance(5) { text += String(repeating: "x", count: int(1000..<70_000)) }
            return text
        }

        mutating func value(depth: Int = 0) -> JSONValue {
            switch int(0..<9) {
            case 0: return .null
            case 1: return .bool(chance(50))
            case 2: return .integer([Int64.min, Int64.max, -1, 0, 1, 315_360_001, 3600][int(0..<7)])
            case 3: return .double([0.5, -1e308, 1e308, 3600.0][int(0..<4)])
            case 4, 5: return .string(string())
            case 6: return .array(depth > 3 ? [] : (0..<int(0..<4)).map { _ in value(depth: depth + 1) })
            case 7: return .object(depth > 3 ? [:] : Dictionary((0..<int(0..<4)).map { _ in (string(), value(depth: depth + 1)) }) { a, _ in a })
            default: return .string(base64URL(string()))
            }
        }

        mutating func claims() -> [String: JSONValue] {
            var claims = ResponseFixtures.aadClaims()
            for _ in 0..<int(0..<4) {
                let keys = Array(claims.keys) + ["oid", "tid", "sub", "preferred_username", "upn", "email", "name"]
                let key = keys[int(0..<keys.count)]
                if chance(30) { claims[key] = nil } else { claims[key] = value() }
            }
            return claims
        }

        mutating func members() -> [String: JSONValue] {
            var members = ResponseFixtures.aadMembers()
            members["access_token"] = .string(ResponseFuzzTests.canaries[0])
            members["refresh_token"] = .string(ResponseFuzzTests.canaries[1])
            let memberNames = ["access_token", "refresh_token", "id_token", "client_info", "scope", "token_type", "expires_in",
                               "ext_expires_in", "refresh_in", "foci", "expires_on", "error", "x-unknown"]
            for _ in 0..<int(1..<5) {
                let name = memberNames[int(0..<memberNames.count)]
                switch int(0..<6) {
                case 0: members[name] = nil
                case 1:
                    members["id_token"] = .string(ResponseFixtures.idToken(claims()) + (chance(20) ? "." + ResponseFuzzTests.canaries[2] : ""))
                case 2:
                    let info: JSONValue = chance(50)
                        ? .object(["uid": value(), "utid": value()]) : value()
                    members["client_info"] = .string(base64URL(info.description))
                case 3: members["id_token"] = .string([string(), string(), string()].joined(separator: "."))
                default: members[name] = value()
                }
            }
            return members
        }

        mutating func bytes() -> [UInt8] {
            var bytes = ResponseFixtures.json(members())
            if chance(35) {
                for _ in 0..<int(1..<8) where !bytes.isEmpty {
                    let position = int(0..<bytes.count)
                    switch int(0..<4) {
                    case 0: bytes[position] ^= UInt8(1 << int(0..<8))
                    case 1: bytes.insert(UInt8(truncatingIfNeeded: int(0..<256)), at: position)
                    case 2: bytes.remove(at: position)
                    default: bytes.removeSubrange(position...)
                    }
                }
            }
            return bytes
        }

        mutating func context() throws -> TokenRequestContext {
            let authorities = ["https://login.microsoftonline.com/\(ResponseFixtures.utid)/", "https://login.microsoftonline.com/common",
                               "https://login.microsoftonline.com/organizations", "https://login.microsoftonline.com/consumers",
                               "https://login.microsoftonline.us/\(ResponseFixtures.guestTenant)"]
            let scopes = [["User.Read"], ["User.Read", "Mail.Read"], ["https://graph.microsoft.com/.default"], ["openid"]]
            return try ResponseFixtures.context(authorities[int(0..<authorities.count)], scopes: scopes[int(0..<scopes.count)])
        }
    }

    @Test(arguments: TestBackend.allCases)
    func fuzzedResponsesAreStoredWholeOrRejectedCleanly(backend: TestBackend) throws {
        let environment = ProcessInfo.processInfo.environment
        let inputs = environment["TOKEN_CACHE_FUZZ_INPUTS"].flatMap(Int.init) ?? 3_000
        let seed = environment["TOKEN_CACHE_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_123
        var fuzzer = Fuzzer(random: SplitMix64(seed: seed))
        var stored = 0
        var rejected: [String: Int] = [:]
        try TestStore.with(backend) { _, cache in
            var counts = try cache.read { try $0.counts() }
            for index in 0..<inputs {
                let bytes = fuzzer.bytes()
                let context = try fuzzer.context()
                do {
                    _ = try cache.ingest(try TokenResponse(json: bytes), context: context)
                    stored += 1
                    counts = try cache.read { try $0.counts() }
                } catch let error as TokenCacheError {
                    rejected[error.code.name, default: 0] += 1
                    for canary in Self.canaries {
                        #expect(!error.message.contains(canary), "input \(index) (seed \(seed)): the error names a token")
                    }
                    #expect(try cache.read { try $0.counts() } == counts, "input \(index) (seed \(seed)): a rejected input wrote")
                } catch {
                    Issue.record("input \(index) (seed \(seed)): \(type(of: error)) escaped instead of a TokenCacheError")
                }
            }
            #expect(try cache.verify().isClean)
        }
        print("response fuzzer: \(inputs) inputs (seed \(seed)): \(stored) stored, rejected \(rejected.sorted { $0.key < $1.key })")
        #expect(stored > inputs / 20 && rejected.values.reduce(0, +) > inputs / 20, "the mutations no longer exercise both outcomes")
        #expect(Set(rejected.keys).isSubset(of: ["invalidArgument", "recordTooLarge"]), "\(rejected)")
    }
}
