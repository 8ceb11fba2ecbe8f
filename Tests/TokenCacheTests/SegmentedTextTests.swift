import CBase64URL
import Foundation
import Testing
import TokenCacheRecords
import TokenCacheSodium

/// Body schema 2's pieces (FORMAT.md §1, §5.3): the constant-time base64url codec, segmented text, field ids and the
/// compact field map.
@Suite(.serialized) struct SegmentedTextTests {
    /// Foundation's base64, made URL-safe and unpadded: the reference the codec is checked against.
    static func reference(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var output = [CChar](repeating: 0, count: tc_base64url_encoded_count(bytes.count))
        tc_base64url_encode(&output, bytes, bytes.count)
        return String(decoding: output.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [UInt8](repeating: 0, count: characters.count * 3 / 4 + 1)
        var written = 0
        let status = tc_base64url_decode(&output, characters, characters.count, &written)
        let canonical = tc_base64url_is_canonical(characters, characters.count)
        #expect((status == 0) == (canonical == 1), "\(text)")
        return status == 0 ? Array(output[..<written]) : nil
    }

    /// Both encoders (SSSE3 and portable) and both decoders agree with Foundation on every length around their steps
    /// and on random data, and each text decodes back.
    @Test(arguments: [false, true])
    func theCodecMatchesFoundationOnEitherPath(portable: Bool) {
        tc_base64url_force_portable(portable ? 1 : 0)
        defer { tc_base64url_force_portable(0) }
        #if arch(x86_64)
        // Every x86-64 machine this runs on has SSSE3 (since 2006): the vectorised path must be the one tested.
        #expect(portable || tc_base64url_uses_simd() == 1)
        #endif
        var generator = SystemRandomNumberGenerator()
        for count in Array(0...80) + [255, 256, 257, 1_000, 1_001, 1_002] {
            for _ in 0..<8 {
                let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let text = Self.encode(bytes)
                #expect(text == Self.reference(bytes), "\(count) bytes")
                #expect(Self.decode(text) == bytes, "\(count) bytes")
            }
        }
    }

    /// Only canonical text decodes: a character outside the alphabet anywhere (the vectorised body or the tail), a length
    /// of 4k + 1, or set bits in the last character's unused low bits.
    @Test(arguments: [false, true])
    func onlyCanonicalTextDecodes(portable: Bool) {
        tc_base64url_force_portable(portable ? 1 : 0)
        defer { tc_base64url_force_portable(0) }
        let valid = Self.encode(Array(0..<48))  // 64 characters: four vector steps
        for position in [0, 15, 16, 40, 63] {
            for bad in ["+", "/", "=", ".", " ", "\u{7F}", "é"] {
                var characters = Array(valid)
                characters[position] = Character(bad)
                #expect(Self.decode(String(characters)) == nil, "\(bad) at \(position)")
            }
        }
        #expect(Self.decode("A") == nil && Self.decode("AAAAA") == nil)
        #expect(Self.decode("AQ") == [1] && Self.decode("AR") == nil)  // 4 unused bits
        #expect(Self.decode("AAE") == [0, 1] && Self.decode("AAF") == nil)  // 2 unused bits
        #expect(Self.decode("") == [])
    }

    static func segmented(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { text in
            var value = [UInt8](repeating: 0, count: SegmentedText.encodedCount(text))
            value.withUnsafeMutableBytes { buffer in
                var writer = ByteWriter(buffer)
                SegmentedText.encode(text, into: &writer)
                #expect(writer.remaining == 0)
            }
            return value
        }
    }

    static func text(ofValue value: [UInt8]) throws(FormatError) -> String {
        try value.withUnsafeBytes { value in
            Result { () throws(FormatError) -> String in
                let count = try SegmentedText.textCount(ofValue: value)
                var output = [UInt8](repeating: 0, count: count)
                output.withUnsafeMutableBytes { SegmentedText.writeText(ofValue: value, into: $0) }
                return String(decoding: output, as: UTF8.self)
            }
        }.get()
    }

    /// Every text reads back byte for byte; base64url segments are stored decoded, others as they are.
    @Test func segmentedTextRoundTripsEveryText() throws {
        let jwt = "eyJhbGciOiJSUzI1NiJ9." + Self.encode(Array(0..<200)) + "." + Self.encode(Array(repeating: 7, count: 256))
        for text in [
            jwt, "", ".", "..", "a", "ab", "a.b", ".leading", "trailing.", "0.AXEA-not_canonical", "AR", "AQ", "Zoë.ünïcödé",
            "with space.and+plus/slash=", "eyJ0eXAiOiJKV1QifQ.fake-access-token.sig",
        ] {
            let value = Self.segmented(text)
            #expect(try Self.text(ofValue: value) == text, "\(text)")
        }
        // A JWT takes about three quarters of its text: its three segments are stored decoded.
        let value = Self.segmented(jwt)
        #expect(value.count < jwt.utf8.count * 3 / 4 + 8, "\(value.count) bytes for \(jwt.utf8.count)")
        // "AQ" is the canonical text of one byte; "AR" is not, so it is kept as it is.
        #expect(Self.segmented("AQ") == [0x02, 0x01] && Self.segmented("AR") == [0x05, 0x41, 0x52])
    }

    /// A secret is written segmented only when that is shorter: many long segments that are not base64url would grow
    /// (a two-byte header for each where a dot took one byte), so such a token stays text.
    @Test func aSecretIsSegmentedOnlyWhenThatIsShorter() throws {
        for (text, segmented) in [
            ("eyJ0eXAiOiJKV1QifQ." + Self.encode(Array(0..<100)), true),
            (String(repeating: String(repeating: "!", count: 70) + ".", count: 20), false),
        ] {
            var map = FieldMap()
            map["secret"] = .string(text)
            let bytes = compactEncoded(map)
            #expect(bytes[1] == (segmented ? FieldType.segmentedText : FieldType.text) && bytes[2] == FieldID.secret, "\(text.prefix(20))")
            #expect(bytes.count <= text.utf8.count + 8)
            #expect(try Self.decodeCompact(bytes) == map)
        }
    }

    @Test func malformedSegmentedTextIsRejected() {
        for (value, why) in [
            ([UInt8](), "no segment"), ([0x00], "an empty decoded segment"), ([0x05, 0x41, 0x2E], "a '.' in a segment kept as it is"),
            ([0x05, 0x41, 0xFF], "a segment kept as it is that is not UTF-8"), ([0x07, 0x41], "a truncated segment"),
            ([0x81, 0x00, 0x41], "a varint not in its shortest form"), ([0x03, 0x41, 0x02], "a truncated second segment"),
        ] as [([UInt8], String)] {
            #expect(throws: FormatError.self, "\(why)") { try Self.text(ofValue: value) }
        }
    }

    /// The id table reads both ways, and a name has an id only if the table gives it one.
    @Test func fieldIDsAndNamesAgree() {
        for id in 1...FieldID.last {
            let name = FieldID.name(id)!
            #expect(FieldID.id(of: Array(name.utf8)) == id, "\(name)")
        }
        #expect(FieldID.name(0) == nil && FieldID.name(FieldID.last + 1) == nil)
        #expect(FieldID.name(FieldID.secret).map { "\($0)" } == "secret")
        for name in ["", "secrets", "Secret", "x_secret", "home_account", "tenant_profiles", "username "] {
            #expect(FieldID.id(of: Array(name.utf8)) == nil, "\(name)")
        }
    }

    static func decodeCompact(_ bytes: [UInt8]) throws(FormatError) -> FieldMap {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(FormatError) -> FieldMap in
                var reader = ByteReader(raw)
                return try FieldMap.decode(&reader, schema: FieldType.compactSchema)
            }
        }.get()
    }

    /// A compact map round-trips (known and unknown names interleaved, every type), and each malformation is refused.
    @Test func compactFieldMapsRoundTripAndRejectMalformations() throws {
        var map = FieldMap()
        map["secret"] = .string("eyJ0eXAiOiJKV1QifQ.payload.c2ln")
        map["realm"] = .string("utid1")
        map["refresh_on"] = .integer(-1)
        map["refused_revision"] = .integer(3)  // unknown: between refresh_on and secret by name
        map["x_json"] = .json(Array(#"{"a":[1,null]}"#.utf8))
        map["target"] = .string(String(repeating: "scope ", count: 40))  // a two-byte length
        let bytes = compactEncoded(map)
        #expect(try Self.decodeCompact(bytes) == map)

        func field(_ type: UInt8, _ id: UInt8, _ rest: [UInt8]) -> [UInt8] { [type, id] + rest }
        let realm = field(0x01, 21, [0x01, 0x61])
        for (bytes, why) in [
            ([0x01] + field(0x01, 99, [0x01, 0x61]), "unknown id"),
            ([0x01] + field(0x01, 0, [0x05] + Array("realm".utf8) + [0x01, 0x61]), "a name with an id written out"),
            ([0x01] + field(0x01, 0, [0x00, 0x01, 0x61]), "an empty name"),
            ([0x02] + realm + field(0x01, 5, [0x01, 0x61]), "client_id after realm"),
            ([0x02] + realm + realm, "a duplicate"),
            ([0x01] + field(0x07, 21, [0x01, 0x61]), "an unknown type"),
            ([0x01] + field(0x02, 21, [0x00, 0x00]), "a truncated integer"),
            ([0x01] + field(0x03, 0, [0x01, 0x78, 0x02, 0x7B, 0x7D, 0x7D]), "a byte after the last field"),
            ([0x01] + field(0x03, 0, [0x01, 0x78, 0x01, 0x7B]), "invalid JSON"),
            ([0x01] + field(0x01, 21, [0x01, 0xFF]), "text that is not UTF-8"),
            ([0x09] + realm, "a count above what the bytes hold"),
            ([0x80, 0x00], "a count not in its shortest form"),
            ([0x01] + field(0x04, 21, [0x02, 0x03, 0x61]), "segmented text on a field other than the secret"),
        ] as [([UInt8], String)] {
            #expect(throws: FormatError.self, "\(why)") { try Self.decodeCompact(bytes) }
        }
    }
}
