import Testing
import TokenCacheSodium

@Suite struct GenericHashTests {
    /// Python: `hashlib.blake2b(b"abc", digest_size=32).hexdigest()`.
    @Test func unkeyedBLAKE2b256OfABCMatchesPython() throws {
        let digest = try GenericHash.hash(Array("abc".utf8), key: nil, outputCount: 32)
        #expect(Hex.encode(digest) == "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
    }

    /// Python: `hashlib.blake2b(b"token-cache keyed BLAKE2b test input", key=bytes(range(32)), digest_size=16)`.
    @Test func keyedBLAKE2b128MatchesPython() throws {
        let key = try makeKey(Array(0..<32))
        let digest = try GenericHash.hash(Array("token-cache keyed BLAKE2b test input".utf8), key: key, outputCount: 16)
        #expect(Hex.encode(digest) == "70c005948a55df749760d54e72adcd8e")
    }

    @Test func bothOverloadsAgreeAndEmptyInputHashes() throws {
        let key = try SecureKey(randomCount: 32)
        let input = Random.bytes(100)
        let viaArray = try GenericHash.hash(input, key: key, outputCount: 64)
        let viaPointer = try input.withUnsafeBytes { try GenericHash.hash($0, key: key, outputCount: 64) }
        #expect(viaArray == viaPointer)
        #expect(viaArray.count == 64)
        let empty = try GenericHash.hash([], key: nil, outputCount: 32)
        #expect(empty.count == 32)
        #expect(empty != (try GenericHash.hash([0], key: nil, outputCount: 32)))
    }

    @Test func differentKeysGiveDifferentDigests() throws {
        let input = Array("same input".utf8)
        let a = try GenericHash.hash(input, key: SecureKey(randomCount: 32), outputCount: 32)
        let b = try GenericHash.hash(input, key: SecureKey(randomCount: 32), outputCount: 32)
        let unkeyed = try GenericHash.hash(input, key: nil, outputCount: 32)
        #expect(a != b)
        #expect(a != unkeyed)
    }

    @Test(arguments: [0, 15, 65])
    func outputCountOutOfRangeIsInvalidLength(count: Int) {
        let error = #expect(throws: SodiumError.self) {
            try GenericHash.hash([1, 2, 3], key: nil, outputCount: count)
        }
        #expect(error?.code == .invalidLength)
    }

    @Test(arguments: [1, 15, 65])
    func keyLengthOutOfRangeIsInvalidLength(count: Int) throws {
        let key = try SecureKey(randomCount: count)
        let error = #expect(throws: SodiumError.self) {
            try GenericHash.hash([1, 2, 3], key: key, outputCount: 32)
        }
        #expect(error?.code == .invalidLength)
    }
}
