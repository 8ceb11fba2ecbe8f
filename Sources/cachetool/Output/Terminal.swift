import Foundation
import TokenCache

/// Text that reaches a terminal. Stored values come from token responses and foreign caches, so a
/// username or realm could carry escape sequences, newlines or bidi overrides: they are shown escaped (the
/// characters `DisplaySafety` names), never interpreted.
enum Terminal {
    static func sanitize(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if DisplaySafety.mustEscape(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// "in 53 min", "expired 2 h ago": how far `time` is from `now`.
enum RelativeTime {
    /// Total over all `Int64` pairs: stored times come from records and `now` from the command line, and neither
    /// may crash the tool. The distance is taken as `UInt64`, where the wrapping difference of two `Int64`s in the
    /// right order is exact.
    static func describe(_ time: Int64, now: Int64) -> String {
        if time >= now { return "in " + span(UInt64(bitPattern: time &- now)) }
        return "expired " + span(UInt64(bitPattern: now &- time)) + " ago"
    }

    static func span(_ seconds: UInt64) -> String {
        switch seconds {
        case ..<60: "\(seconds) s"
        case ..<3600: "\(seconds / 60) min"
        case ..<86_400 where seconds % 3600 >= 60: "\(seconds / 3600) h \(seconds % 3600 / 60) min"
        case ..<172_800: "\(seconds / 3600) h"
        default: "\(seconds / 86_400) d"
        }
    }
}

/// A plain-text table with left-aligned columns, sized by what they hold (``ColumnLayout/init(headers:rows:cuts:indent:width:)``).
struct Table {
    let headers: [String]
    var rows: [[String]] = []
    /// Where each column's values are cut when the table is fitted to a width: identifiers in the middle.
    var cuts: [DisplayWidth.Cut] = []

    init(headers: [String], cuts: [DisplayWidth.Cut] = []) {
        self.headers = headers
        self.cuts = cuts
    }

    mutating func append(_ row: [String]) { rows.append(row.map(Terminal.sanitize)) }

    /// The table, fitted to `width` terminal columns when given (``TerminalWidth/current(environment:)``); without one
    /// every value is shown in full.
    func render(width: Int? = nil) -> String {
        let layout = ColumnLayout(headers: headers, rows: rows, cuts: cuts, width: width)
        func line(_ cells: [String]) -> String { layout.line(cells.map { ColumnLayout.Cell($0) }, style: .plain) }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}
