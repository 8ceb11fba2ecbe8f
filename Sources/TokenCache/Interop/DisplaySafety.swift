/// The characters that must never reach a terminal or a displayed JSON document raw when they come from a token, a
/// response or a file: a username or realm is attacker-influenced text.
///
/// Escaped: C0 and C1 control characters and DEL (a C1 `U+009B` is a complete escape-sequence introducer on many
/// terminals), the Unicode bidirectional controls (`U+202A`–`U+202E`, `U+2066`–`U+2069`, `U+200E`, `U+200F`,
/// `U+061C`, which can make text display in another order than it is), zero-width and invisible formatting
/// characters (`U+200B`–`U+200D`, `U+2060`–`U+2064`, `U+FEFF`, `U+00AD`, `U+180E`, `U+206A`–`U+206F`), the line and
/// paragraph separators `U+2028`/`U+2029`, interlinear annotation controls (`U+FFF9`–`U+FFFB`) and tag characters
/// (`U+E0000`–`U+E007F`).
public enum DisplaySafety {
    /// Whether `scalar` is shown escaped.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0, 0xAD, 0x61C, 0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2064,
             0x2066...0x206F, 0xFEFF, 0xFFF9...0xFFFB, 0xE0000...0xE007F:
            return true
        default:
            return false
        }
    }

    /// JSON text (as an encoder wrote it) with every character of ``mustEscape(_:)`` from DEL up written as a
    /// `\uXXXX` escape (a surrogate pair above `U+FFFF`). The encoder already escapes C0 controls inside strings, so
    /// a raw one is structural whitespace and stays; the others can only occur inside strings, where an escape
    /// means the same character, so the document's value is unchanged.
    static func escapingJSON(_ text: String) -> String {
        func needsEscape(_ scalar: Unicode.Scalar) -> Bool { scalar.value >= 0x7F && mustEscape(scalar) }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            }
        }
        return String(result)
    }
}
