import Foundation

/// JSON text ⇄ ``JSONValue``, for the JSON-typed fields of a record's field map (FORMAT.md §5.3).
enum JSONText {
    /// Compact UTF-8 JSON with sorted object keys; the deterministic form written to disk.
    static func encode(_ value: JSONValue, pretty: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSONValue cannot fail: every case maps to a JSON value (non-finite doubles excepted,
        // which the decoder never produces and `validate` rejects before they reach the store).
        guard let data = try? encoder.encode(value) else { return "null" }
        let text = String(decoding: data, as: UTF8.self)
        return pretty ? collapsingEmptyContainers(text) : text
    }

    /// Foundation's pretty printer writes an empty array or object over three lines (`[`, an empty line, `]`); this
    /// writes `[]` and `{}`. Safe on encoder output: a raw newline occurs only between tokens (inside strings it is
    /// escaped), so an opening bracket followed by an empty line and the closing bracket is always an empty container.
    static func collapsingEmptyContainers(_ text: String) -> String {
        guard text.contains("\n\n") else { return text }
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
                var probe = index + 1, newlines = 0
                while probe < bytes.count, bytes[probe] == UInt8(ascii: "\n") || bytes[probe] == UInt8(ascii: " ") {
                    if bytes[probe] == UInt8(ascii: "\n") { newlines += 1 }
                    probe += 1
                }
                if newlines == 2, probe < bytes.count, bytes[probe] == close {
                    result += [byte, close]
                    index = probe + 1
                    continue
                }
            }
            result.append(byte)
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Parses JSON text; `nil` if it is not a single valid JSON value.
    static func decode(_ text: some Collection<UInt8>) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text))
    }
}
