import Testing
import TokenCacheSodium

@testable import TokenCache
import TokenCacheRecords

@Suite struct FieldMapTests {
    private func encode(_ map: FieldMap) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: map.encodedCount)
        bytes.withUnsafeMutableBytes { buffer in
            var writer = ByteWriter(buffer)
            map.encode(into: &writer)
        }
        return bytes
    }

    private func decode(_ bytes: [UInt8]) throws -> FieldMap {
        try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try FieldMap.decode(&reader)
        }
    }

    private var sample: FieldMap {
        var map = FieldMap()
        map["b"] = .string("text")
        map["a"] = .integer(-5)
        map["c"] = .json(Array(#"{"k":[1,true]}"#.utf8))
        return map
    }

    @Test func roundTripsInCanonicalOrder() throws {
        let bytes = encode(sample)
        #expect(try decode(bytes) == sample)
        // "a" (integer) first: names in ascending byte order.
        #expect(Array(bytes[4..<8]) == [0x02, 0x00, 0x01, 0x61])
    }

    @Test func rejectsEveryTruncation() {
        let bytes = encode(sample)
        for length in 0..<bytes.count {
            #expect(throws: FormatError.self, "length \(length)") { try decode(Array(bytes.prefix(length))) }
        }
        #expect(throws: FormatError.self) { try decode(bytes + [0]) }
    }

    @Test func rejectsDuplicatesDisorderUnknownTypesAndBadValues() throws {
        func field(_ type: UInt8, _ name: String, _ value: [UInt8]) -> [UInt8] {
            [type, 0, UInt8(name.utf8.count)] + Array(name.utf8) + [0, 0, 0, UInt8(value.count)] + value
        }
        func map(_ fields: [UInt8]...) -> [UInt8] { [0, 0, 0, UInt8(fields.count)] + fields.flatMap { $0 } }
        let text = Array("x".utf8)
        #expect(throws: FormatError.self) { try decode(map(field(1, "b", text), field(1, "a", text))) }
        #expect(throws: FormatError.self) { try decode(map(field(1, "a", text), field(1, "a", text))) }
        #expect(throws: FormatError.self) { try decode(map(field(9, "a", text))) }
        #expect(throws: FormatError.self) { try decode(map(field(2, "a", [1, 2, 3]))) }
        #expect(throws: FormatError.self) { try decode(map(field(3, "a", Array("{not json".utf8)))) }
        #expect(throws: FormatError.self) { try decode(map(field(1, "a", [0xFF, 0xFE]))) }
        #expect(throws: FormatError.self) { try decode(map(field(1, "", text))) }
        #expect(throws: FormatError.self) { try decode([0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(try decode(map(field(1, "B", text), field(1, "a", text))).names == ["B", "a"])
    }
}
