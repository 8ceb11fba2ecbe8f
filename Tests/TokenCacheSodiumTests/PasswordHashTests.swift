import Testing
import TokenCacheSodium

@Suite struct PasswordHashTests {
    static let opsLimit: UInt64 = 2
    static let memLimit: UInt64 = 8 << 20

    func derive(
        _ passphrase: String, salt: [UInt8], count: Int = 32, opsLimit: UInt64 = opsLimit, memLimit: UInt64 = memLimit
    ) throws(SodiumError) -> SecureKey {
        let result: Result<SecureKey, SodiumError> = Array(passphrase.utf8).withUnsafeBytes { passphrase in
            Result { () throws(SodiumError) in
                try PasswordHash.deriveKey(
                    count: count, passphrase: passphrase, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
            }
        }
        return try result.get()
    }

    @Test func constantsAreLibsodiumArgon2idValues() {
        #expect(PasswordHash.saltByteCount == 16)
        #expect(PasswordHash.interactive == (2, 64 << 20))
        #expect(PasswordHash.moderate == (3, 256 << 20))
        #expect(PasswordHash.sensitive == (4, 1 << 30))
    }

    @Test func sameInputsGiveTheSameKey() throws {
        let salt = [UInt8](repeating: 0x5A, count: 16)
        let a = try derive("correct horse battery staple", salt: salt)
        let b = try derive("correct horse battery staple", salt: salt)
        #expect(a.count == 32)
        #expect(a.constantTimeEquals(b))
    }

    @Test func anotherSaltOrPassphraseGivesAnotherKey() throws {
        let salt = [UInt8](repeating: 0x5A, count: 16)
        var otherSalt = salt
        otherSalt[15] ^= 1
        let base = try derive("correct horse battery staple", salt: salt)
        #expect(!base.constantTimeEquals(try derive("correct horse battery staple", salt: otherSalt)))
        #expect(!base.constantTimeEquals(try derive("correct horse battery stapler", salt: salt)))
        #expect(!base.constantTimeEquals(try derive("correct horse battery staple", salt: salt, opsLimit: 3)))
    }

    /// libsodium's own vector: `test/default/pwhash_argon2id.c`, `tv()` entry 0 (which calls `crypto_pwhash` with the
    /// default algorithm, Argon2id 1.3), expected output from the first line of `pwhash_argon2id.exp`. Argon2i gives
    /// other bytes for the same inputs, so this pins the algorithm as well as the parameter plumbing.
    @Test func knownAnswerFromLibsodiumsArgon2idTests() throws {
        let passphrase = [UInt8](
            hex: "a347ae92bce9f80f6f595a4480fc9c2fe7e7d7148d371e9487d75f5c23008ffae0"
                + "65577a928febd9b1973a5a95073acdbeb6a030cfc0d79caa2dc5cd011cef02c08d"
                + "a232d76d52dfbca38ca8dcbd665b17d1665f7cf5fe59772ec909733b24de97d6f5"
                + "8d220b20c60d7c07ec1fd93c52c31020300c6c1facd77937a597c7a6")
        let salt = [UInt8](hex: "5541fbc995d5c197ba290346d2c559de")
        let key = try passphrase.withUnsafeBytes { passphrase in
            try PasswordHash.deriveKey(count: 155, passphrase: passphrase, salt: salt, opsLimit: 5, memLimit: 7_256_678)
        }
        let expected =
            "18acec5d6507739f203d1f5d9f1d862f7c2cdac4f19d2bdff64487e60d969e3ced615337b9eec6ac4461c6ca07f0939741e57c24d0005c"
            + "7ea171a0ee1e7348249d135b38f222e4dad7b9a033ed83f5ca27277393e316582033c74affe2566a2bea47f91f0fd9fe49ece7e1f79f3a"
            + "d6e9b23e0277c8ecc4b313225748dd2a80f5679534a0700e246a79a49b3f74eb89ec6205fe1eeb941c73b1fcf1"
        #expect(Hex.encode(keyBytes(key)) == expected)
    }

    @Test func emptyPassphraseIsAccepted() throws {
        let key = try derive("", salt: Random.bytes(16), count: 16)
        #expect(key.count == 16)
    }

    @Test(arguments: [(UInt64(0), memLimit), (opsLimit, UInt64(8191)), (opsLimit, UInt64.max)])
    func limitsOutsideLibsodiumRangeAreInvalidParameters(opsLimit: UInt64, memLimit: UInt64) {
        let error = #expect(throws: SodiumError.self) {
            try derive("pass", salt: Random.bytes(16), opsLimit: opsLimit, memLimit: memLimit)
        }
        #expect(error?.code == .invalidParameters)
    }

    @Test func wrongSaltOrOutputLengthIsInvalidLength() {
        let salt = #expect(throws: SodiumError.self) { try derive("pass", salt: Random.bytes(15)) }
        #expect(salt?.code == .invalidLength)
        let error = #expect(throws: SodiumError.self) { try derive("pass", salt: Random.bytes(16), count: 15) }
        #expect(error?.code == .invalidLength)
    }
}
