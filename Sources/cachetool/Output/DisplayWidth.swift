import CDisplayWidth

/// How many terminal columns text takes, and text cut to a number of columns.
///
/// Columns are counted per grapheme cluster (what a person sees as one character), by the C library's `wcwidth`
/// tables: an East Asian Wide or Fullwidth character (CJK, Hangul, fullwidth forms) takes two columns, a combining
/// mark none. A cluster takes the width of its widest scalar, two when it asks for emoji presentation (`U+FE0F`) or
/// is a flag (a pair of regional indicators), as terminals draw them.
enum DisplayWidth {
    /// The columns `text` takes. Text must already be escaped for the terminal (``Terminal/sanitize(_:)``).
    static func columns(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        return text.reduce(0) { $0 + columns($1) }
    }

    /// The columns one grapheme cluster takes.
    static func columns(_ character: Character) -> Int {
        if character.isASCII { return 1 }
        var widest = 0
        var regionalIndicators = 0
        for scalar in character.unicodeScalars {
            if scalar.value == 0xFE0F { return 2 }
            if (0x1F1E6...0x1F1FF).contains(scalar.value) { regionalIndicators += 1 }
            widest = max(widest, columns(scalar))
        }
        return regionalIndicators >= 2 ? 2 : widest
    }

    /// The columns of one scalar: the C library's answer; one for a scalar it does not know (a terminal shows a
    /// replacement glyph); without a UTF-8 locale in the C library, two for emoji and one for the rest.
    static func columns(_ scalar: Unicode.Scalar) -> Int {
        let answer = Int(tc_scalar_columns(scalar.value))
        switch answer {
        case 0...2: return answer
        case -2: return scalar.properties.isEmojiPresentation ? 2 : 1
        default: return 1
        }
    }

    /// Where a cut text loses its characters.
    enum Cut {
        /// Keeps the start: for lists and names, read from the left.
        case end
        /// Keeps both ends: for identifiers (GUIDs), told apart by their first and last characters.
        case middle
        /// Keeps the whole words that fit, from the start: for lists of words (scopes), never cut inside one unless
        /// the first alone is too wide.
        case words
    }

    /// `text` if it fits in `width` columns; otherwise as much of it as fits with `…` where the cut is.
    static func truncated(_ text: String, to width: Int, cut: Cut = .end) -> String {
        guard columns(text) > width else { return text }
        guard width > 1 else { return width == 1 ? "…" : "" }
        let budget = width - 1
        switch cut {
        case .end:
            return prefix(of: text, columns: budget) + "…"
        case .words:
            var kept = ""
            for word in text.split(separator: " ") {
                let candidate = kept.isEmpty ? String(word) : kept + " " + word
                guard columns(candidate) + 2 <= width else { break }
                kept = candidate
            }
            return kept.isEmpty ? prefix(of: text, columns: budget) + "…" : kept + " …"
        case .middle:
            // A wide character that does not fit the head leaves its cell to the tail.
            let head = prefix(of: text, columns: (budget + 1) / 2)
            return head + "…" + suffix(of: text, columns: budget - columns(head))
        }
    }

    private static func prefix(of text: String, columns budget: Int) -> String {
        var used = 0
        var result = ""
        for character in text {
            let width = columns(character)
            guard used + width <= budget else { break }
            used += width
            result.append(character)
        }
        return result
    }

    private static func suffix(of text: String, columns budget: Int) -> String {
        var used = 0
        var result: [Character] = []
        for character in text.reversed() {
            let width = columns(character)
            guard used + width <= budget else { break }
            used += width
            result.append(character)
        }
        return String(result.reversed())
    }
}
