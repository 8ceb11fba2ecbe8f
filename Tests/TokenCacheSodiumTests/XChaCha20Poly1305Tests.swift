import TestSupport
import Testing
import TokenCacheSodium

@Suite struct XChaCha20Poly1305Tests {
    enum Tamper: CaseIterable, Sendable {
        case ciphertext, tag, nonce, associatedData, key
    }

    @Test func constantsMatchTheConstruction() {
        #expect(XChaCha20Poly1305.keyByteCount == 32)
        #expect(XChaCha20Poly1305.nonceByteCount == 24)
        #expect(XChaCha20Poly1305.tagByteCount == 16)
    }

    @Test(arguments: [0, 1, 1024, 70_000])
    func sealThenOpenRoundTrips(size: Int) throws {
        let key = try SecureKey(randomCount: 32)
        let plaintext = Random.bytes(size)
        let ad = Array("tcache/v1 slot".utf8)
        let nonce = Random.bytes(24)
        let sealed = try seal(plaintext, ad: ad, nonce: nonce, key: key)
        #expect(sealed.count == size + 16)
        // "The ciphertext is not the plaintext" only means something when a coincidence is negligible: a
        // 1-byte ciphertext equals its plaintext once in 256 random keys (this assertion was flaky at size 1).
        if size >= 16 {
            #expect(Array(sealed.prefix(size)) != plaintext)
        }
        let (opened, error) = open(sealed, ad: ad, nonce: nonce, key: key)
        #expect(error == nil)
        #expect(opened == plaintext)
    }

    @Test func emptyAssociatedDataRoundTrips() throws {
        let key = try SecureKey(randomCount: 32)
        let nonce = Random.bytes(24)
        let sealed = try seal([1, 2, 3], ad: [], nonce: nonce, key: key)
        let (opened, error) = open(sealed, ad: [], nonce: nonce, key: key)
        #expect(error == nil)
        #expect(opened == [1, 2, 3])
    }

    @Test(arguments: Tamper.allCases)
    func aFlippedBitFailsAuthenticationAndZeroesTheOutput(tamper: Tamper) throws {
        let keyMaterial = Random.bytes(32)
        let key = try makeKey(keyMaterial)
        let plaintext = Random.bytes(1024)
        var ad = Array("tcache/v1 ad".utf8)
        var nonce = Random.bytes(24)
        var sealed = try seal(plaintext, ad: ad, nonce: nonce, key: key)
        var openingKey = key
        switch tamper {
        case .ciphertext: sealed[17] ^= 0x01
        case .tag: sealed[sealed.count - 1] ^= 0x80
        case .nonce: nonce[23] ^= 0x01
        case .associatedData: ad[0] ^= 0x01
        case .key:
            var flipped = keyMaterial
            flipped[31] ^= 0x01
            openingKey = try makeKey(flipped)
        }
        let (output, error) = open(sealed, ad: ad, nonce: nonce, key: openingKey)
        #expect(error?.code == .authenticationFailed)
        #expect(output.count == 1024)
        #expect(output.allSatisfy { $0 == 0 })
    }

    @Test func emptyPlaintextTagIsAuthenticated() throws {
        let key = try SecureKey(randomCount: 32)
        let nonce = Random.bytes(24)
        var sealed = try seal([], ad: [9], nonce: nonce, key: key)
        #expect(sealed.count == 16)
        sealed[0] ^= 1
        #expect(open(sealed, ad: [9], nonce: nonce, key: key).error?.code == .authenticationFailed)
    }

    @Test func errorMessageRevealsNothingAboutTheInputs() throws {
        let key = try SecureKey(randomCount: 32)
        let nonce = Random.bytes(24)
        var sealed = try seal(Array("hunter2-secret".utf8), ad: [], nonce: nonce, key: key)
        sealed[0] ^= 1
        let error = try #require(open(sealed, ad: [], nonce: nonce, key: key).error)
        #expect(error.description == "authenticationFailed: ciphertext did not authenticate")
    }

    /// draft-irtf-cfrg-xchacha-03, Appendix A.3.1. The expected bytes also agree with an independent computation
    /// (Python: HChaCha20 written out by hand + `cryptography`'s ChaCha20Poly1305).
    @Test func knownAnswerFromTheXChaChaDraft() throws {
        let plaintext = Array(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .utf8)
        let ad = [UInt8](hex: "50515253c0c1c2c3c4c5c6c7")
        let key = try makeKey(Array(0x80...0x9F))
        let nonce = [UInt8](0x40...0x57)
        let expected = [UInt8](
            hex: "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
                + "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
                + "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
                + "21f9664c97637da9768812f615c68b13b52e"
                + "c0875924c1c7987947deafd8780acf49")
        #expect(try seal(plaintext, ad: ad, nonce: nonce, key: key) == expected)
        let (opened, error) = open(expected, ad: ad, nonce: nonce, key: key)
        #expect(error == nil)
        #expect(opened == plaintext)
    }

    @Test func ciphertextShorterThanTheTagIsInvalidLength() throws {
        let key = try SecureKey(randomCount: 32)
        let (output, error) = open(Array(repeating: 0, count: 15), ad: [], nonce: Random.bytes(24), key: key)
        #expect(error?.code == .invalidLength)
        #expect(output.isEmpty)
    }

    @Test(arguments: [0, 12, 23, 25])
    func wrongNonceLengthIsInvalidLength(count: Int) throws {
        let key = try SecureKey(randomCount: 32)
        let error = #expect(throws: SodiumError.self) {
            try seal([1], ad: [], nonce: Random.bytes(count), key: key)
        }
        #expect(error?.code == .invalidLength)
        #expect(error?.message == "nonce must be 24 bytes, got \(count)")
        let sealed = try seal([1], ad: [], nonce: Random.bytes(24), key: key)
        #expect(open(sealed, ad: [], nonce: Random.bytes(count), key: key).error?.code == .invalidLength)
    }

    @Test(arguments: [16, 31, 33, 64])
    func wrongKeyLengthIsInvalidLength(count: Int) throws {
        let key = try SecureKey(randomCount: count)
        let error = #expect(throws: SodiumError.self) {
            try seal([1], ad: [], nonce: Random.bytes(24), key: key)
        }
        #expect(error?.code == .invalidLength)
    }

    @Test func sharedKeyWorksAcrossConcurrentTasks() async throws {
        let key = try SecureKey(randomCount: 32)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let plaintext = Random.bytes(index * 37)
                    let nonce = Random.bytes(24)
                    let sealed = try seal(plaintext, ad: [UInt8(index)], nonce: nonce, key: key)
                    let (opened, error) = open(sealed, ad: [UInt8(index)], nonce: nonce, key: key)
                    return error == nil && opened == plaintext
                }
            }
            for try await succeeded in group {
                #expect(succeeded)
            }
        }
    }

    @Test func sealWithAWrongOutputSizeStopsTheProcess() async {
        let result = await #expect(processExitsWith: .runtimeTrap, observing: [\.standardErrorContent]) {
            let key = try SecureKey(randomCount: 32)
            var output = [UInt8](repeating: 0, count: 16)
            try output.withUnsafeMutableBytes { output in
                try [UInt8(1)].withUnsafeBytes { plaintext in
                    try Random.bytes(24).withUnsafeBytes { nonce in
                        try XChaCha20Poly1305.seal(
                            plaintext, associatedData: UnsafeRawBufferPointer(start: nil, count: 0), nonce: nonce,
                            key: key, into: output)
                    }
                }
            }
        }
        #expect(result?.reportsTrap("Precondition failed: XChaCha20Poly1305.seal: output must be plaintext.count + 16 bytes") == true)
    }
}
