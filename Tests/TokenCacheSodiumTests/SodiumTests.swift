import Testing
import TokenCacheSodium

@Suite struct SodiumTests {
    @Test func initializeIsIdempotentAndThreadSafe() async throws {
        try Sodium.initialize()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 {
                group.addTask { try Sodium.initialize() }
            }
            try await group.waitForAll()
        }
        try Sodium.initialize()
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
