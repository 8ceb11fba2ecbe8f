/// Columns of a table printed row by row, as its records stream in: widths come from the terminal, not from the
/// rows (which are not all known when the first is printed), so every row lines up with the header and the
/// columns are the same whatever the data.
///
/// Every column has a minimum width and a width it would like. On a terminal of `width` columns, each starts at its
/// minimum, then the columns grow in order of `growth` up to the width they would like, and the last one (the one
/// with the longest values) gets what is left. A value wider than its column is cut (identifiers in the
/// middle, text at the end). Without a width (output into a pipe or a file, or `--output wide`), every column has
/// the width it would like and nothing is cut: the last column runs as long as its values.
struct ColumnLayout {
    struct Column {
        var header: String
        var minimum: Int
        var preferred: Int
        var cut: DisplayWidth.Cut = .end
        /// Lower grows first.
        var growth: Int = 0
    }

    /// A cell: its text (escaped for the terminal by the caller) and its colour.
    struct Cell {
        var text: String
        var attribute: TextStyle.Attribute? = nil

        init(_ text: String, _ attribute: TextStyle.Attribute? = nil) {
            self.text = text
            self.attribute = attribute
        }
    }

    static let gap = 2

    let columns: [Column]
    let indent: Int
    let widths: [Int]
    /// Whether values are cut to their column.
    let cuts: Bool

    init(columns: [Column], indent: Int, width: Int?) {
        self.columns = columns
        self.indent = indent
        guard let width else {
            widths = columns.map(\.preferred)
            cuts = false
            return
        }
        cuts = true
        var widths = columns.map(\.minimum)
        var left = width - indent - Self.gap * (columns.count - 1) - widths.reduce(0, +)
        for index in columns.indices.sorted(by: { columns[$0].growth < columns[$1].growth }) where left > 0 {
            let grow = min(left, columns[index].preferred - widths[index])
            if grow > 0 {
                widths[index] += grow
                left -= grow
            }
        }
        if left > 0 { widths[widths.count - 1] += left }
        self.widths = widths
    }

    /// One line: the cells cut and padded to their columns, coloured by `style`. The last cell is not padded.
    func line(_ cells: [Cell], style: TextStyle) -> String {
        var result = String(repeating: " ", count: indent)
        for (index, cell) in cells.enumerated() {
            let width = widths[index]
            let text = cuts ? DisplayWidth.truncated(cell.text, to: width, cut: columns[index].cut) : cell.text
            result += style.paint(text, cell.attribute)
            if index < cells.count - 1 {
                let padding = max(width - DisplayWidth.columns(text), 0) + Self.gap
                result += String(repeating: " ", count: padding)
            }
        }
        return result
    }

    /// The header line, in bold on a terminal.
    func headerLine(style: TextStyle) -> String {
        line(columns.map { Cell($0.header, .bold) }, style: style)
    }
}
