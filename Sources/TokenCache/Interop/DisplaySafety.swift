/// The characters that must never reach a terminal or a displayed JSON document raw when they come from a token, a
/// response or a file: a username or realm is attacker-influenced text.
///
/// Escaped: C0 and C1 control characters and DEL (a C1 `U+009B` is a complete escape-sequence introducer on many
/// terminals); every format character (general category Cf), among them the Unicode bidirectional controls
/// (`U+202A`–`U+202E`, `U+2066`–`U+2069`, `U+200E`, `U+200F`, `U+061C`, which can make text display in another order
/// than it is), zero-width and invisible characters (`U+200B`–`U+200D`, `U+2060`–`U+2064`, `U+FEFF`, `U+00AD`),
/// interlinear annotation controls (`U+FFF9`–`U+FFFB`) and tag characters (`U+E0001`, `U+E0020`–`U+E007F`); the line
/// and paragraph separators `U+2028`/`U+2029`; and the deprecated format controls `U+206A`–`U+206F` and `U+180E`,
/// which older Unicode versions also classed as Cf.
public enum DisplaySafety {
    /// Whether `scalar` is shown escaped.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0, 0xAD, 0x61C, 0x180E, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2064,
             0x2066...0x206F, 0xFEFF, 0xFFF9...0xFFFB, 0xE0000...0xE007F:
            return true
        case 0x20..<0x600:
            // No format character here but U+00AD, above.
            return false
        default:
            return scalar.properties.generalCategory == .format
        }
    }
}
