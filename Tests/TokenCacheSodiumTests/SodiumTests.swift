import Testing
import TokenCacheSodium

@Suite struct SodiumTests {
    /// In a fresh process, where no test has initialized libsodium yet, so that the concurrent calls race to the
    /// first `sodium_init()` instead of reading a stored result.
    @Test func initializeIsIdempotentAndThreadSafe() async {
        await #expect(processExitsWith: .success) {
            let succeeded = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<32 {
                    group.addTask { (try? Sodium.initialize()) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            guard succeeded == 32 else { throw InitializationCheckFailed("\(succeeded) of 32 concurrent calls succeeded") }
            try Sodium.initialize()
            // libsodium works afterwards: its random generator and a known BLAKE2b-256 answer (Python:
            // `hashlib.blake2b(b"abc", digest_size=32).hexdigest()`).
            guard Random.bytes(32) != Random.bytes(32) else { throw InitializationCheckFailed("random bytes repeat") }
            let digest = try GenericHash.hash(Array("abc".utf8), key: nil, outputCount: 32)
            guard Hex.encode(digest) == "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319" else {
                throw InitializationCheckFailed("BLAKE2b-256 of abc is \(Hex.encode(digest))")
            }
        }
    }

    struct InitializationCheckFailed: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    @Test func versionIsLibsodium1() {
        #expect(Sodium.versionString.hasPrefix("1."))
    }

    @Test func errorDescriptionIsCodeAndMessage() throws {
        let key = try SecureKey(randomCount: 32)
        let error = #expect(throws: SodiumError.self) {
            try seal([], ad: [], nonce: [1, 2, 3], key: key)
        }
        #expect(error?.description == "invalidLength: nonce must be 24 bytes, got 3")
        #expect(error?.message == "nonce must be 24 bytes, got 3")
    }
}
