import Foundation
import TestSupport
import Testing
@testable import TokenCache

/// The hand-written pretty printer writes what Foundation's encoder writes (pretty, sorted keys, unescaped slashes),
/// with empty containers on one line and the characters `DisplaySafety` names escaped: the same document, byte for
/// byte, so scripts see no difference, only tools a faster one.
@Suite struct JSONPrettyPrinterTests {
    /// The reference: Foundation's encoder, then the two changes the printer makes, done the slow, obvious way.
    static func reference(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        var text = String(decoding: try encoder.encode(value), as: UTF8.self)
        text = text.replacingOccurrences(of: "\\[\\n *\\n *\\]", with: "[]", options: .regularExpression)
        text = text.replacingOccurrences(of: "\\{\\n *\\n *\\}", with: "{}", options: .regularExpression)
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x7F && DisplaySafety.mustEscape(scalar) {
                for unit in String(scalar).utf16 { escaped += String(format: "\\u%04x", unit) }
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    static let strings = [
        "", "plain", "quote\" backslash\\ slash/", "tab\tnewline\ncr\rbs\u{08}ff\u{0C}", "\u{01}\u{1F}\u{7F}\u{9B}", "é中文👍🏽",
        "\u{202E}rtl\u{2066}\u{200B}\u{FEFF}\u{E0041}", "\u{2028}\u{2029}\u{0600}\u{110BD}", "10", "9", "B", "_", "a",
    ]

    /// A deterministic pseudo-random value of depth up to `depth`.
    static func value(_ generator: inout SplitMix64, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(Int.random(in: 0..<2, using: &generator) == 0)
        case 2: return .integer([0, -1, ReferenceTime.now, Int64.max, Int64.min][Int.random(in: 0..<5, using: &generator)])
        case 3: return .double([1.5, 0.1, 1e300, -2.25][Int.random(in: 0..<4, using: &generator)])
        case 4, 5: return .string(strings[Int.random(in: 0..<strings.count, using: &generator)])
        case 6: return .array((0..<Int.random(in: 0..<4, using: &generator)).map { _ in value(&generator, depth: depth - 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<5, using: &generator) { members[strings[Int.random(in: 0..<strings.count, using: &generator)]] = value(&generator, depth: depth - 1) }
            return .object(members)
        }
    }

    @Test func printsWhatTheEncoderPrints() throws {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let value = Self.value(&generator, depth: 4)
            #expect(JSONPrettyPrinter.print(value) == (try Self.reference(value)), "\(value)")
        }
        for text in Self.strings {
            #expect(JSONPrettyPrinter.print(.object([text: .string(text)])) == (try Self.reference(.object([text: .string(text)]))))
        }
    }

    @Test func indentShiftsEveryLineButTheFirst() {
        let value = JSONValue.object(["a": .array([.integer(1), .object([:])]), "b": .string("x")])
        let plain = JSONPrettyPrinter.print(value)
        #expect(JSONPrettyPrinter.print(value, indent: 4) == plain.replacingOccurrences(of: "\n", with: "\n    "))
    }
}
