import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress indicator on standard error: done/total, percent, rate and time left, redrawn in place.
///
/// Only on a terminal (a pipe or a file gets nothing: scripts read the result, not the ticks), never more than
/// ten times a second, and only once the work has taken longer than `delay` (half a second unless the command says
/// otherwise), so that a quick command prints no bar at all.
final class ProgressBar {
    private let label: String
    private let unit: String
    private let delay: TimeInterval
    private let start = Date()
    private var lastDraw: Date? = nil
    private var drawn = false

    /// nil when standard error is not a terminal.
    init?(label: String, unit: String, delay: TimeInterval = 0.5) {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        self.label = label
        self.unit = unit
        self.delay = delay
    }

    func update(done: Int, total: Int) {
        let now = Date()
        let elapsed = now.timeIntervalSince(start)
        guard elapsed >= delay, lastDraw.map({ now.timeIntervalSince($0) >= 0.1 }) ?? true else { return }
        lastDraw = now
        drawn = true
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.line(label: label, unit: unit, done: done, total: total, elapsed: elapsed)).utf8))
    }

    /// Clears the bar, if one was drawn. The next ``update(done:total:)`` draws it again: a command that prints to
    /// the same terminal as it goes clears the bar before each write.
    func finish() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        drawn = false
    }

    /// `importing 12,000/100,000 entries (12 %), 35,210/s, about 3 s left`.
    static func line(label: String, unit: String, done: Int, total: Int, elapsed: TimeInterval) -> String {
        var text = "\(label) \(grouped(done))/\(grouped(total)) \(unit)"
        if total > 0 { text += " (\(done * 100 / total) %)" }
        if elapsed > 0, done > 0 {
            let rate = Double(done) / elapsed
            text += ", \(grouped(Int(rate)))/s"
            if total > done { text += ", about \(RelativeTime.span(UInt64(Double(total - done) / rate))) left" }
        }
        return text
    }

    static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (number < 0 ? "-" : "") + result
    }
}
