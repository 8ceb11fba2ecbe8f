import Foundation

/// Lines of prose fitted to the terminal by breaking between words, never inside one: a line the terminal wraps
/// itself breaks wherever the edge falls (`AppM` / `etadata 3`).
enum TextWrap {
    /// `text` (already escaped for the terminal) in lines of at most `width` columns, continuation lines indented by
    /// `indent` columns. A list separated by ` · ` breaks before a `·` rather than inside an item, when it can; a word
    /// wider than the line is left whole. Without a width (a pipe or a file) the text is one line, as it is.
    static func wrap(_ text: String, width: Int?, indent: Int) -> [String] {
        guard let width, DisplayWidth.columns(text) > width else { return [text] }
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        func append(_ piece: String, separator: String) {
            if line.isEmpty {
                line = piece
            } else if DisplayWidth.columns(line + separator + piece) <= width {
                line += separator + piece
            } else {
                lines.append(line)
                line = margin + (separator == " · " ? "· " : "") + piece
            }
        }
        let items = text.components(separatedBy: " · ")
        for (index, item) in items.enumerated() {
            let separator = index == 0 ? "" : " · "
            if DisplayWidth.columns(line + separator + item) <= width {
                line += separator + item
                continue
            }
            // The item does not fit on this line: it starts the next one if it fits there whole, else its words fill on.
            let fresh = margin + (separator.isEmpty ? "" : "· ") + item
            if !line.isEmpty, DisplayWidth.columns(fresh) <= width {
                lines.append(line)
                line = fresh
                continue
            }
            for (position, word) in item.split(separator: " ", omittingEmptySubsequences: false).enumerated() {
                append(String(word), separator: position == 0 ? separator : " ")
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
