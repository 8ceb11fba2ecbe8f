import Testing
import TokenCacheSodium

@Suite struct KeyedHasherTests {
    /// The saved-state path must give `crypto_generichash`'s digest for every input: all lengths 0...600 (up to and
    /// past several blocks), for key and output sizes at both ends of libsodium's ranges.
    @Test(arguments: [(16, 16), (32, 16), (32, 32), (64, 64)])
    func matchesCryptoGenerichashForEveryLength(keyCount: Int, outputCount: Int) throws {
        let key = try SecureKey(randomCount: keyCount)
        let hasher = try KeyedHasher(key: key, outputCount: outputCount)
        #expect(hasher.usesSavedState)  // on this platform's libsodium the fast path is the one under test
        let input = Random.bytes(600)
        for length in 0...input.count {
            let slice = Array(input[..<length])
            var digest = [UInt8](repeating: 0, count: outputCount)
            try slice.withUnsafeBytes { bytes in try digest.withUnsafeMutableBytes { try hasher.hash(bytes, into: $0) } }
            #expect(digest == (try GenericHash.hash(slice, key: key, outputCount: outputCount)), "length \(length)")
        }
    }

    /// Python: `hashlib.blake2b(b"token-cache keyed BLAKE2b test input", key=bytes(range(32)), digest_size=16)`.
    @Test func keyedBLAKE2b128MatchesPython() throws {
        let hasher = try KeyedHasher(key: try makeKey(Array(0..<32)), outputCount: 16)
        var digest = [UInt8](repeating: 0, count: 16)
        try Array("token-cache keyed BLAKE2b test input".utf8).withUnsafeBytes { input in
            try digest.withUnsafeMutableBytes { try hasher.hash(input, into: $0) }
        }
        #expect(Hex.encode(digest) == "70c005948a55df749760d54e72adcd8e")
    }

    @Test func aWrongOutputBufferOrLengthIsInvalidLength() throws {
        let hasher = try KeyedHasher(key: try SecureKey(randomCount: 32), outputCount: 16)
        var short = [UInt8](repeating: 0, count: 8)
        let error = #expect(throws: SodiumError.self) {
            try [UInt8(1)].withUnsafeBytes { input in try short.withUnsafeMutableBytes { try hasher.hash(input, into: $0) } }
        }
        #expect(error?.code == .invalidLength)
        let longOutput = #expect(throws: SodiumError.self) { try KeyedHasher(key: try SecureKey(randomCount: 32), outputCount: 65) }
        #expect(longOutput?.code == .invalidLength)
        let shortKey = #expect(throws: SodiumError.self) { try KeyedHasher(key: try SecureKey(randomCount: 8), outputCount: 16) }
        #expect(shortKey?.code == .invalidLength)
    }
}
