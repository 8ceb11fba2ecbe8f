import Testing
import TokenCacheSodium

@Suite struct EncodingTests {
    static let variants: [Base64.Variant] = [.original, .originalNoPadding, .urlSafe, .urlSafeNoPadding]

    func decode(_ text: String, _ variant: Base64.Variant) throws(SodiumError) -> [UInt8] {
        let result: Result<[UInt8], SodiumError> = Array(text.utf8).withUnsafeBytes { text in
            Result { () throws(SodiumError) in try Base64.decode(text, variant: variant) }
        }
        return try result.get()
    }

    func encode(_ bytes: [UInt8], _ variant: Base64.Variant) -> String {
        bytes.withUnsafeBytes { Base64.encode($0, variant: variant) }
    }

    @Test(arguments: variants)
    func base64RoundTripsEveryLength(variant: Base64.Variant) throws {
        for length in 0...70 {
            let bytes = Random.bytes(length)
            let text = encode(bytes, variant)
            #expect(try decode(text, variant) == bytes)
        }
    }

    @Test func base64KnownAnswers() throws {
        let bytes: [UInt8] = [0xFB, 0xFF, 0x68, 0x65, 0x6C, 0x6C, 0x6F]
        #expect(encode(bytes, .original) == "+/9oZWxsbw==")
        #expect(encode(bytes, .originalNoPadding) == "+/9oZWxsbw")
        #expect(encode(bytes, .urlSafe) == "-_9oZWxsbw==")
        #expect(encode(bytes, .urlSafeNoPadding) == "-_9oZWxsbw")
        #expect(try decode("aGVsbG8=", .original) == Array("hello".utf8))
        #expect(try decode("", .original).isEmpty)
    }

    @Test(arguments: [
        ("aGV$bG8=", Base64.Variant.original),  // character outside the alphabet
        ("aGVs bG8=", .original),  // whitespace is not ignored
        ("aGVsbG8=\n", .original),  // trailing newline
        ("aGVsbG8", .original),  // missing padding
        ("aGVsbG8==", .original),  // extra padding
        ("aGVsbG8=", .originalNoPadding),  // padding where none is allowed
        ("aGVsbG8=x", .original),  // trailing garbage
        ("aGVsbG9=", .original),  // non-zero trailing bits
        ("-_9oZWxsbw==", .original),  // URL-safe alphabet in the original variant
        ("+/9oZWxsbw==", .urlSafe),  // original alphabet in the URL-safe variant
        ("a", .originalNoPadding),  // impossible length
    ])
    func base64DecodeIsStrict(text: String, variant: Base64.Variant) {
        let error = #expect(throws: SodiumError.self) { try decode(text, variant) }
        #expect(error?.code == .invalidEncoding)
    }

    @Test func base64DecodesAKeyIntoSecureMemory() throws {
        let material = Random.bytes(32)
        let text = Array(encode(material, .original).utf8)
        let key = try text.withUnsafeBytes { try Base64.decodeKey($0, variant: .original) }
        #expect(keyBytes(key) == material)
        let bad = #expect(throws: SodiumError.self) {
            try Array("not base64!".utf8).withUnsafeBytes { try Base64.decodeKey($0, variant: .original) }
        }
        #expect(bad?.code == .invalidEncoding)
        let empty = #expect(throws: SodiumError.self) {
            try [UInt8]().withUnsafeBytes { try Base64.decodeKey($0, variant: .original) }
        }
        #expect(empty?.code == .invalidLength)
    }

    @Test func hexIsLowercaseTwoDigitsPerByte() {
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode([0x00, 0x01, 0x09, 0x0A, 0x0F, 0x10, 0x7F, 0x80, 0xAB, 0xFF]) == "0001090a0f107f80abff")
        #expect(Hex.encode(0...255).count == 512)
        #expect(Hex.encode((0...255).lazy.map { UInt8($0) }).hasSuffix("fdfeff"))
    }
}
