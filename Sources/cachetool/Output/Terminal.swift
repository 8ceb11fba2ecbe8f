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

/// A plain-text table with left-aligned columns.
struct Table {
    let headers: [String]
    var rows: [[String]] = []

    init(headers: [String]) { self.headers = headers }

    mutating func append(_ row: [String]) { rows.append(row.map(Terminal.sanitize)) }

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}
