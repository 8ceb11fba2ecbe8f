import Foundation

/// Writes a deserialized JSON value back as compact JSON, as MSAL.NET writes its cache (System.Text.Json: no spaces,
/// `/` not escaped).
///
/// Why not `JSONSerialization.data(withJSONObject:)`: on Linux (swift-corelibs-foundation) it takes about 2 ms for a
/// user's ~37 KB cache, several times what the rest of a write costs and far more than MSAL's own serializer, so it
/// would measure Foundation rather than the design. `JSONEncoder` needs typed values; this takes the
/// `JSONSerialization` tree as it is.
enum CompactJSON {
    static func data(_ value: Any) throws -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(64 << 10)
        try write(value, into: &output)
        return Data(output)
    }

    private static func write(_ value: Any, into output: inout [UInt8]) throws {
        switch value {
        case let text as String:
            string(text, into: &output)
        case let object as [String: Any]:
            output.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                string(key, into: &output)
                output.append(UInt8(ascii: ":"))
                try write(member, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        case let array as [Any]:
            output.append(UInt8(ascii: "["))
            for (index, member) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try write(member, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case is NSNull:
            output += Array("null".utf8)
        case let flag as Bool:
            output += Array((flag ? "true" : "false").utf8)
        case let number as Int:
            output += Array(String(number).utf8)
        case let number as Double:
            output += Array(String(number).utf8)
        case let number as NSNumber:
            output += Array(number.stringValue.utf8)
        default:
            throw BenchError("a value JSON cannot hold: \(type(of: value))")
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func string(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: output += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
