import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `--color auto|always|never`.
enum ColorChoice: String, CaseIterable, ExpressibleByArgument {
    case auto, always, never
}

/// Colour and emphasis for a terminal, as SGR escape sequences; plain text when off.
///
/// On by default only when standard output is a terminal that draws colour: never into a pipe or a file, never when
/// `NO_COLOR` is set to anything (no-color.org) or `TERM` is `dumb`. `--color always` and `--color never` override all
/// of that. Colour repeats what the text already says (expired tokens say "expired"), so nothing is lost without it.
struct TextStyle {
    /// An SGR attribute.
    enum Attribute: String {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", magenta = "35"
    }

    let isEnabled: Bool

    static let plain = TextStyle(isEnabled: false)

    static func resolve(_ choice: ColorChoice, environment: [String: String] = ProcessInfo.processInfo.environment) -> TextStyle {
        switch choice {
        case .always: return TextStyle(isEnabled: true)
        case .never: return .plain
        case .auto:
            let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
            let dumb = environment["TERM"] == "dumb"
            return TextStyle(isEnabled: isatty(STDOUT_FILENO) == 1 && !noColor && !dumb)
        }
    }

    /// `text` in `attribute` (nil: as it is). Apply to text already escaped and cut to width: the escape sequences
    /// take no columns.
    func paint(_ text: String, _ attribute: Attribute?) -> String {
        guard isEnabled, let attribute, !text.isEmpty else { return text }
        return "\u{1B}[\(attribute.rawValue)m" + text + "\u{1B}[0m"
    }
}

/// The width of the terminal a table is laid out for.
enum TerminalWidth {
    /// `COLUMNS` when set to a positive number (scripts and tests fix the width with it), else the width of the
    /// terminal standard output is, else nil: output into a pipe or a file is not cut to any width.
    static func current(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int? {
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 { return columns }
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
