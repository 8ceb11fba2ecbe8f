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
        /// What the cell says instead when its text does not fit its column, rather than the text cut mid-word.
        var short: String? = nil

        init(_ text: String, _ attribute: TextStyle.Attribute? = nil, short: String? = nil) {
            self.text = text
            self.attribute = attribute
            self.short = short
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

    /// Columns sized by what they hold, for a table whose rows are all known before it is printed: each would like
    /// its widest value (or header). When they do not all fit in `width`, text (cut at the end) is served first, since a
    /// cut word reads badly, and identifiers (cut in the middle) share what is left, since they are told apart by their
    /// ends (at least ``identifierFloor`` cells each); within each, the room is shared evenly, a column that needs less
    /// than its share leaving the rest to the others. Without a width, nothing is cut.
    init(headers: [String], rows: [[String]], cuts: [DisplayWidth.Cut], indent: Int = 0, width: Int?) {
        let preferred = headers.indices.map { index in
            rows.reduce(DisplayWidth.columns(headers[index])) { max($0, index < $1.count ? DisplayWidth.columns($1[index]) : 0) }
        }
        let cut = headers.indices.map { $0 < cuts.count ? cuts[$0] : DisplayWidth.Cut.end }
        var widths = preferred
        if let width, preferred.reduce(0, +) > width - indent - Self.gap * (headers.count - 1) {
            // Identifiers keep enough of both ends to be told apart; text at least its header.
            widths = headers.indices.map { index in
                min(preferred[index], cut[index] == .middle ? Self.identifierFloor : DisplayWidth.columns(headers[index]))
            }
            var left = width - indent - Self.gap * (headers.count - 1) - widths.reduce(0, +)
            for kind in [DisplayWidth.Cut.end, .middle] {
                var wanting = headers.indices.filter { cut[$0] == kind && widths[$0] < preferred[$0] }
                    .sorted { preferred[$0] - widths[$0] < preferred[$1] - widths[$1] }
                while left > 0, !wanting.isEmpty {
                    let share = max(left / wanting.count, 1)
                    let index = wanting.removeFirst()
                    let grow = min(share, preferred[index] - widths[index], left)
                    widths[index] += grow
                    left -= grow
                }
            }
        }
        let columns = headers.indices.map { index in
            Column(header: headers[index], minimum: widths[index], preferred: widths[index], cut: cut[index])
        }
        self.init(columns: columns, indent: indent, width: width)
    }

    /// The fewest cells an identifier is cut to when a table is fitted: six characters of each end (`0c2d1f…8d0e1f`).
    static let identifierFloor = 13

    /// One line: the cells cut and padded to their columns, coloured by `style`. The last cell is not padded.
    func line(_ cells: [Cell], style: TextStyle) -> String {
        var result = String(repeating: " ", count: indent)
        for (index, cell) in cells.enumerated() {
            let width = widths[index]
            var text = cell.text
            if cuts, DisplayWidth.columns(text) > width {
                text = DisplayWidth.truncated(cell.short ?? text, to: width, cut: columns[index].cut)
            }
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
