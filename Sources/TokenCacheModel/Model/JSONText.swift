import Foundation

/// JSON text ⇄ ``JSONValue``, for the JSON-typed fields of a record's field map (FORMAT.md §5.3).
package enum JSONText {
    /// Compact UTF-8 JSON with sorted object keys; the deterministic form written to disk.
    package static func encode(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSONValue cannot fail: every case maps to a JSON value (non-finite doubles excepted,
        // which the decoder never produces and `validate` rejects before they reach the store).
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses JSON text; `nil` if it is not a single valid JSON value.
    package static func decode(_ text: some Collection<UInt8>) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text))
    }
}
