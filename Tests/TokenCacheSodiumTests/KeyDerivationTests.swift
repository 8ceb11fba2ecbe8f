import Testing
import TokenCacheSodium

@Suite struct KeyDerivationTests {
    let master: SecureKey

    init() throws {
        master = try makeKey(Array(0x20...0x3F))
    }

    @Test func sameInputsGiveTheSameSubkey() throws {
        let a = try KeyDerivation.deriveKey(from: master, id: 1, context: "tcacheV1")
        let b = try KeyDerivation.deriveKey(from: master, id: 1, context: "tcacheV1")
        #expect(a.count == 32)
        #expect(a.constantTimeEquals(b))
    }

    @Test func differentIdOrContextGivesADifferentSubkey() throws {
        let base = try KeyDerivation.deriveKey(from: master, id: 1, context: "tcacheV1")
        let otherID = try KeyDerivation.deriveKey(from: master, id: 2, context: "tcacheV1")
        let otherContext = try KeyDerivation.deriveKey(from: master, id: 1, context: "tcacheV2")
        let otherMaster = try KeyDerivation.deriveKey(from: SecureKey(randomCount: 32), id: 1, context: "tcacheV1")
        #expect(!base.constantTimeEquals(otherID))
        #expect(!base.constantTimeEquals(otherContext))
        #expect(!base.constantTimeEquals(otherMaster))
        #expect(!base.constantTimeEquals(master))
    }

    /// Expected values from Python: `hashlib.blake2b(b"", digest_size=32, key=master,
    /// salt=struct.pack("<Q", id) + bytes(8), person=b"tcacheV1")`, the construction libsodium documents for
    /// crypto_kdf_derive_from_key.
    @Test func matchesAnIndependentBLAKE2bComputation() throws {
        let one = try KeyDerivation.deriveKey(from: master, id: 1, context: "tcacheV1")
        let two = try KeyDerivation.deriveKey(from: master, id: 2, context: "tcacheV1")
        #expect(Hex.encode(keyBytes(one)) == "48913ef471bd643cac67ba8123b5d31264f8ab01b56eb8de42619b2b2a5aa302")
        #expect(Hex.encode(keyBytes(two)) == "ff4b75ea495d06b04cfa2997eef14ed5af35b4f322c1a409489f0cc426bef534")
    }

    @Test(arguments: [16, 64])
    func subkeyLengthFollowsCount(count: Int) throws {
        #expect(try KeyDerivation.deriveKey(from: master, id: 7, context: "tcacheV1", count: count).count == count)
    }

    @Test(arguments: ["", "tcache", "tcacheV1x", "tcacheé1"])
    func contextOtherThanEightBytesIsInvalidParameters(context: String) {
        let error = #expect(throws: SodiumError.self) {
            try KeyDerivation.deriveKey(from: master, id: 1, context: context)
        }
        #expect(error?.code == .invalidParameters)
    }

    @Test(arguments: [0, 15, 65])
    func subkeyLengthOutOfRangeIsInvalidLength(count: Int) {
        let error = #expect(throws: SodiumError.self) {
            try KeyDerivation.deriveKey(from: master, id: 1, context: "tcacheV1", count: count)
        }
        #expect(error?.code == .invalidLength)
    }

    @Test func masterKeyOtherThan32BytesIsInvalidLength() throws {
        let short = try SecureKey(randomCount: 16)
        let error = #expect(throws: SodiumError.self) {
            try KeyDerivation.deriveKey(from: short, id: 1, context: "tcacheV1")
        }
        #expect(error?.code == .invalidLength)
    }
}
