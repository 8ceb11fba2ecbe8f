import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `inspect` table of the sample store, byte for byte, at two terminal widths, with and without colour, and in
/// the wide and summary forms: what a person sees is held still, so a change to it is a decision. The store path and
/// the fingerprints (keyed per store) read `<store>` and `<fingerprint-16>`.
///
/// To accept a deliberate change: `UPDATE_GOLDENS=1 swift test --filter InspectGoldenTests`, then review the diff of
/// `Tests/CacheToolTests/InspectGoldens/`.
@Suite struct InspectGoldenTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [String]
        var columns: Int?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "table-80", arguments: ["--color", "never"], columns: 80),
        Case(name: "table-160", arguments: ["--color", "never"], columns: 160),
        Case(name: "table-80-color", arguments: ["--color", "always"], columns: 80),
        Case(name: "table-160-color", arguments: ["--color", "always"], columns: 160),
        Case(name: "wide", arguments: ["--output", "wide", "--color", "never"], columns: 80),
        Case(name: "summary-80", arguments: ["--summary", "--color", "never"], columns: 80),
        Case(name: "summary-color", arguments: ["--summary", "--color", "always"], columns: 80),
        Case(name: "expired-160", arguments: ["--expired", "--expiring-within", "45m", "--color", "never"], columns: 160),
    ]

    static let goldens = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("InspectGoldens")

    @Test(arguments: cases)
    func theTableIsTheGoldenText(_ golden: Case) throws {
        // A short store path, so that the heading is never cut: it then reads `<store>` whatever the random part.
        var template = Array("/tmp/tc-golden-XXXXXX".utf8CString)
        let root = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            let store = CLIStore(root: root)
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            let run = try store.run(
                ["inspect", "--now", "\(CacheToolTests.now)"] + golden.arguments, extra: golden.columns.map { ["COLUMNS": "\($0)"] } ?? [:]
            )
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.output)")
            // Fingerprints are keyed per store: shown as a placeholder of the same width.
            let text = run.stdout.replacingOccurrences(of: store.directory, with: "<store>")
                .replacingOccurrences(of: "\\b[0-9a-f]{16}\\b", with: "<fingerprint-16>", options: .regularExpression)
            let file = Self.goldens.appendingPathComponent(golden.name + ".txt")
            if ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1" {
                try text.write(to: file, atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOf: file, encoding: .utf8)
            #expect(text == expected, "\(golden.name): got\n\(text)")
            if let columns = golden.columns, !golden.arguments.contains("wide") {
                for line in Self.visibleLines(text) {
                    #expect(line.count <= columns, "wider than \(columns): \(line)")
                }
            }
        }
    }

    /// The lines as a terminal shows them: colour sequences take no columns.
    static func visibleLines(_ text: String) -> [String] {
        text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression).split(separator: "\n").map(String.init)
    }
}
