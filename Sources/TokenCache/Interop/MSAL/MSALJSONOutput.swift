internal import TokenCacheRecords
/// JSON text as the MSAL cache writer emits it: UTF-8 bytes appended to a buffer, strings escaped per RFC 8259,
/// objects with their members sorted bytewise by name, so that equal content always gives equal bytes.
struct MSALJSONOutput {
    private(set) var bytes: [UInt8] = []

    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Hands the bytes so far to `sink` and empties the buffer.
    mutating func drain(into sink: ([UInt8]) throws -> Void) rethrows {
        guard !bytes.isEmpty else { return }
        try sink(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    var count: Int { bytes.count }

    /// A JSON string of the UTF-8 bytes `utf8` (assumed valid UTF-8): `"` and `\` and the C0 controls escaped,
    /// everything else as is.
    mutating func appendString(utf8: some Sequence<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func appendString(_ text: String) { appendString(utf8: text.utf8) }

    /// Compact JSON of `value`, object members sorted bytewise. Doubles are written in Swift's shortest
    /// round-trip form (`3.0`, `1e+300`), so reading them back gives the same double, and a double stays a double;
    /// a non-finite double (which validation keeps out of entities) is written `null`.
    mutating func appendValue(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .integer(let integer): append(String(integer))
        case .double(let double): append(double.isFinite ? double.description : "null")
        case .string(let text): appendString(text)
        case .array(let elements):
            append("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { append(",") }
                appendValue(element)
            }
            append("]")
        case .object(let members):
            append("{")
            for (index, name) in Self.sorted(members.keys).enumerated() {
                if index > 0 { append(",") }
                appendString(name)
                append(":")
                appendValue(members[name]!)
            }
            append("}")
        }
    }

    /// Bytewise (UTF-8) order: independent of Swift's `String` comparison, which is not byte order outside ASCII.
    static func sorted(_ names: some Sequence<String>) -> [String] {
        names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
