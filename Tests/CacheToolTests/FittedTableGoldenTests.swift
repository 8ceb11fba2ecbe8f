import Foundation
import Testing
@testable import cachetool

/// `accounts`, `stats` and `info` fitted to the terminal, byte for byte at 80 columns and at a wide 160: no line
/// wider than the terminal, prose broken between words under its label, table columns given room by what they hold.
/// The store path, fingerprints, write ages (the sample is written at the wall clock's time) and page use read as
/// placeholders.
///
/// To accept a deliberate change: `UPDATE_GOLDENS=1 swift test --filter FittedTableGoldenTests`, then review the diff
/// of `Tests/CacheToolTests/TableGoldens/`.
@Suite struct FittedTableGoldenTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [String]
        var columns: Int
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "accounts-80", arguments: ["accounts"], columns: 80),
        Case(name: "accounts-160", arguments: ["accounts"], columns: 160),
        Case(name: "stats-80", arguments: ["stats", "--reveal-identifiers", "--now", "\(CacheToolTests.now)"], columns: 80),
        Case(name: "stats-160", arguments: ["stats", "--reveal-identifiers", "--now", "\(CacheToolTests.now)"], columns: 160),
        Case(name: "stats-50", arguments: ["stats", "--now", "\(CacheToolTests.now)"], columns: 50),
    ]

    static let goldens = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("TableGoldens")

    @Test(arguments: cases)
    func theTableIsTheGoldenText(_ golden: Case) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            let run = try store.run(golden.arguments, extra: ["COLUMNS": "\(golden.columns)"])
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.output)")
            let masked = run.stdout.replacingOccurrences(of: store.directory, with: "<store>")
                .replacingOccurrences(of: "\\b[0-9a-f]{16}\\b", with: "<fingerprint-16>", options: .regularExpression)
                .replacingOccurrences(of: "(oldest|newest) (in )?[0-9]+ [a-z]+( ago)?", with: "$1 <age>", options: .regularExpression)
                // Page use differs from store to store (records are placed by keyed hashes): sizes and the databases'
                // page counts are not held still.
                .replacingOccurrences(of: "[0-9.]+ KiB", with: "<n> KiB", options: .regularExpression)
                .replacingOccurrences(of: "\nDATABASE[^$]*", with: "\nDATABASE …\n", options: .regularExpression)
            let text = Self.sortingTiedRows(masked)
            let file = Self.goldens.appendingPathComponent(golden.name + ".txt")
            if ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1" {
                try text.write(to: file, atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOf: file, encoding: .utf8)
            #expect(text == expected, "\(golden.name): got\n\(text)")
            for line in run.stdout.split(separator: "\n") where !line.hasPrefix("Store ") {
                #expect(DisplayWidth.columns(String(line)) <= golden.columns, "wider than \(golden.columns): \(line)")
            }
        }
    }

    /// Rows of clients or accounts with as many records sort by fingerprint, keyed per store: sorted here by their
    /// text, so that only what is held still is compared.
    static func sortingTiedRows(_ text: String) -> String {
        var lines: [String] = []
        var run: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("  <fingerprint-16>") {
                run.append(line)
                continue
            }
            lines += run.sorted()
            run = []
            lines.append(line)
        }
        return (lines + run.sorted()).joined(separator: "\n")
    }

    /// Into a pipe (no `COLUMNS`, no terminal) nothing is cut or broken.
    @Test func intoAPipeEveryValueIsWhole() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            let accounts = try store.run(["accounts"]).stdout
            #expect(accounts.contains("1a2b3c4d-0000-4000-8000-a11ce0000001.0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f  alice@contoso.example"))
            #expect(!accounts.contains("…"))
            let stats = try store.run(["stats", "--now", "\(CacheToolTests.now)"]).stdout
            #expect(stats.contains("Account 3 · AccessToken 5 · RefreshToken 3 · IdToken 3 · AppMetadata 3\n") && !stats.contains("…"))
        }
    }

    @Test func wrappedProseNeverBreaksAWord() {
        let text = "records        2,345,678: Account 3 · AccessToken 1,234,567 · RefreshToken 3 · IdToken 3 · AppMetadata 3 · 用户名@例子.公司.中国"
        for width in 20...120 {
            let lines = TextWrap.wrap(text, width: width, indent: 15)
            let words = lines.joined(separator: " ").split(separator: " ").filter { $0 != "·" }
            #expect(words == text.split(separator: " ").filter { $0 != "·" }, "\(width): \(lines)")
            for line in lines {
                // Only a single word wider than the line may overflow it.
                let overflows = DisplayWidth.columns(line) > width
                #expect(!overflows || line.trimmingCharacters(in: .whitespaces).split(separator: " ").filter { $0 != "·" }.count == 1, "\(width): \(line)")
            }
        }
        #expect(TextWrap.wrap(text, width: nil, indent: 15) == [text])
    }

    @Test func fittedColumnsServeTextBeforeIdentifiers() {
        let id = "1a2b3c4d-0000-4000-8000-a11ce0000001.0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f"
        let layout = ColumnLayout(
            headers: ["HOME ACCOUNT", "USERNAME", "ENVIRONMENT", "REALMS"],
            rows: [[id, "alice@contoso.example", "login.microsoftonline.com", "0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f"]],
            cuts: [.middle, .end, .end, .middle], width: 80
        )
        #expect(layout.widths[1] == 21 && layout.widths[2] == 25, "text whole: \(layout.widths)")
        #expect(layout.widths[0] >= ColumnLayout.identifierFloor && layout.widths[3] >= ColumnLayout.identifierFloor)
        #expect(layout.widths.reduce(0, +) + 3 * ColumnLayout.gap <= 80)
        let wide = ColumnLayout(headers: ["A", "B"], rows: [["short", id]], cuts: [.end, .middle], width: 160)
        #expect(wide.widths[0] == 5 && !wide.line([.init("short"), .init(id)], style: .plain).contains("…"))
    }

    @Test func scopesAreCutBetweenWords() {
        #expect(DisplayWidth.truncated("User.Read Mail.Read openid profile email", to: 22, cut: .words) == "User.Read Mail.Read …")
        #expect(DisplayWidth.truncated("https://management.azure.com/user_impersonation", to: 22, cut: .words) == "https://management.az…")
        #expect(DisplayWidth.truncated("User.Read", to: 22, cut: .words) == "User.Read")
    }
}
