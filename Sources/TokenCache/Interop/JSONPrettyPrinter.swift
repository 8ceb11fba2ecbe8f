/// Pretty-printed JSON for display, written directly: the layout of Foundation's `JSONEncoder` with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]` (two-space indent, `"key" : value`, keys in byte order),
/// empty containers as `[]` and `{}`, and every character ``DisplaySafety`` names escaped.
///
/// Tools print one document per record (`cachetool inspect --json` streams millions): going through `Codable` costs
/// tens of microseconds a record, this a few. A test holds it byte for byte to the encoder's output.
enum JSONPrettyPrinter {
    /// `value` as text whose lines after the first are indented by `indent` spaces (for a value nested in a document
    /// written piece by piece).
    static func print(_ value: JSONValue, indent: Int = 0) -> String {
        var output = ""
        write(value, indent: indent, into: &output)
        return output
    }

    private static func write(_ value: JSONValue, indent: Int, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        // Foundation's number formatting (`1e+300`, `-0`, `3`), for the rare double an unknown field holds.
        case .double: output += JSONText.encode(value)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += String(repeating: " ", count: indent + 2)
                write(element, indent: indent + 2, into: &output)
                output += index == elements.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{\n"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                output += String(repeating: " ", count: indent + 2)
                writeString(key, into: &output)
                output += " : "
                write(members[key]!, indent: indent + 2, into: &output)
                output += index == keys.count - 1 ? "\n" : ",\n"
            }
            output += String(repeating: " ", count: indent) + "}"
        }
    }

    private static func writeString(_ text: String, into output: inout String) {
        // Most strings are printable ASCII without quotes or backslashes: copied whole.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            output += "\""
            output += text
            output += "\""
            return
        }
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 || (scalar.value >= 0x7F && DisplaySafety.mustEscape(scalar)) {
                    for unit in String(scalar).utf16 {
                        let hex = String(unit, radix: 16)
                        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    }
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
