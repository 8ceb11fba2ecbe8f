internal import TokenCache
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

    /// A JSON string of the UTF-8 bytes `utf8` (assumed valid UTF-8): `"` and `\` escaped, and every character
    /// ``DisplaySafety`` names (C0 and C1 controls, DEL, bidirectional and invisible characters) as `\uXXXX`, so that
    /// an export shown on a terminal cannot drive it; the value read back is the same.
    mutating func appendString(utf8: some Collection<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        if utf8.allSatisfy({ $0 < 0x7F }) {
            for byte in utf8 { appendASCII(byte) }
        } else {
            for scalar in String(decoding: utf8, as: UTF8.self).unicodeScalars {
                if scalar.isASCII && scalar.value != 0x7F {
                    appendASCII(UInt8(scalar.value))
                } else if DisplaySafety.mustEscape(scalar) {
                    for unit in String(scalar).utf16 { appendEscape(unit) }
                } else {
                    bytes.append(contentsOf: String(scalar).utf8)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendASCII(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0x00..<0x20: appendEscape(UInt16(byte))
        default: bytes.append(byte)
        }
    }

    /// `\uXXXX` of one UTF-16 code unit.
    private mutating func appendEscape(_ unit: UInt16) {
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [0x5C, UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) { bytes.append(hex[Int((unit >> UInt16(shift)) & 0x0F)]) }
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
