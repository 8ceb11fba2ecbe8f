import Foundation
import Testing
import TokenCache
@testable import cachetool

/// `cachetool inspect` beyond the golden tables: columns measured in terminal cells, filters, limits and the summary
/// agreeing with what the store holds, JSON equal to the library's listing, and a reader that goes away.
@Suite struct InspectViewTests {
    static let now = CacheToolTests.now

    // MARK: Terminal cells

    @Test(arguments: [
        ("abc", 3), ("中文", 4), ("Ａ", 2), ("한국어", 6), ("e\u{301}", 1), ("é", 1), ("👍🏽", 2), ("🇫🇷", 2), ("❤\u{FE0F}", 2),
        ("\u{301}", 0), ("a\u{200B}b", 2), ("…", 1),
    ])
    func textIsMeasuredInTerminalCells(text: String, columns: Int) {
        #expect(DisplayWidth.columns(text) == columns, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test func cutTextFitsItsColumnAndSaysWhereItWasCut() {
        let samples = ["0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f", "用户名@例子.公司.中国", "mixed中a文b字c", "👍🏽👍🏽👍🏽👍🏽", "short"]
        for text in samples {
            for width in 0...40 {
                for cut in [DisplayWidth.Cut.end, .middle] {
                    let result = DisplayWidth.truncated(text, to: width, cut: cut)
                    #expect(DisplayWidth.columns(result) <= max(width, 0), "\(text) \(width) \(cut): \(result)")
                    if DisplayWidth.columns(text) <= width {
                        #expect(result == text)
                    } else if width >= 1 {
                        #expect(result.contains("…") && result != text)
                        // No more than one cell lost beside the marker, when a wide character does not fit.
                        #expect(DisplayWidth.columns(result) >= width - 1, "\(text) \(width) \(cut): \(result)")
                        // The ends are kept where they fit.
                        let first = DisplayWidth.columns(text.first!), last = DisplayWidth.columns(text.last!)
                        if cut == .middle && width >= 2 * max(first, last) + 1 {
                            #expect(result.first == text.first && result.last == text.last, "\(result)")
                        } else if cut == .end {
                            #expect(result.last == "…")
                            if width > first { #expect(result.first == text.first, "\(result)") }
                        }
                    }
                }
            }
        }
        #expect(DisplayWidth.truncated("0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f", to: 13, cut: .middle) == "0c2d1f…8d0e1f")
    }

    /// Usernames in wide characters keep every column in line: each row's TENANT column starts at the same cell.
    @Test(arguments: [80, 160])
    func wideCharactersKeepTheColumnsInLine(columns: Int) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            for (index, name) in ["山田太郎@例え.日本", "김민준@예시.한국", "plain@contoso.example"].enumerated() {
                let home = "uid\(index).tenant中文\(index)"
                try cache.put(Account(homeAccountID: home, environment: "login.microsoftonline.com", realm: "tenant中文\(index)", localAccountID: "uid", username: name, authorityType: "MSSTS"))
                try cache.put(AccessToken(
                    homeAccountID: home, environment: "login.microsoftonline.com", clientID: "客户端-\(index)-0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f",
                    realm: "tenant中文\(index)", target: "user.read", secret: Secret("at"), cachedAt: Self.now, expiresOn: Self.now + 3_600
                ))
            }
            let run = try store.run(["inspect", "--now", "\(Self.now)", "--color", "never"], extra: ["COLUMNS": "\(columns)"])
            #expect(run.status == 0, "\(run.output)")
            let lines = run.stdout.split(separator: "\n").map(String.init)
            let header = try #require(lines.first { $0.hasPrefix("  KIND") })
            let tenantCell = DisplayWidth.columns(String(header[..<header.range(of: "TENANT")!.lowerBound]))
            let rows = lines.filter { $0.hasPrefix("  account") || $0.hasPrefix("  access") }
            #expect(rows.count == 6)
            for row in rows {
                // The text before the TENANT column takes exactly as many cells as in the header.
                let cells = row.map(DisplayWidth.columns)
                var used = 0, index = 0
                while used < tenantCell { used += cells[index]; index += 1 }
                #expect(used == tenantCell && row[row.index(row.startIndex, offsetBy: index - 1)] == " ", "\(row)")
                #expect(row[row.index(row.startIndex, offsetBy: index)] != " ", "\(row)")
                #expect(DisplayWidth.columns(row) <= columns, "\(row)")
            }
            for line in lines { #expect(DisplayWidth.columns(line) <= columns, "\(line)") }
        }
    }

    // MARK: Filters, limits, summary

    /// The sample store plus a second account with the same username: fixtures every filter test shares.
    private func sampleStore(_ body: (CLIStore) throws -> Void) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(Self.now)"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            try cache.put(Account(homeAccountID: "other.tenant", environment: "login.chinacloudapi.cn", realm: "tenant", localAccountID: "other", username: "Alice@Contoso.example", authorityType: "MSSTS"))
            try cache.put(AccessToken(
                homeAccountID: "other.tenant", environment: "login.chinacloudapi.cn", clientID: "china-client", realm: "tenant",
                target: "user.read", secret: Secret("at"), cachedAt: Self.now, expiresOn: Self.now + 20 * 60
            ))
            try body(store)
        }
    }

    private func json(_ store: CLIStore, _ arguments: [String]) throws -> [String: Any] {
        let run = try store.run(["inspect", "--json", "--now", "\(Self.now)"] + arguments)
        #expect(run.status == 0, "\(run.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    private static let arrays = ["accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]

    private func counts(_ document: [String: Any]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: Self.arrays.map { ($0, (document[$0] as? [Any])?.count ?? -1) })
    }

    @Test(arguments: [
        (["--kind", "access-token,rt"], ["accounts": 0, "access_tokens": 6, "refresh_tokens": 3, "id_tokens": 0, "app_metadata": 0]),
        (["--kind", "id", "--kind", "app"], ["accounts": 0, "access_tokens": 0, "refresh_tokens": 0, "id_tokens": 3, "app_metadata": 3]),
        (["--expired"], ["accounts": 0, "access_tokens": 1, "refresh_tokens": 0, "id_tokens": 0, "app_metadata": 0]),
        // Sample tokens expire in 40, 53, 59 and 70 minutes, the added one in 20.
        (["--expiring-within", "45m"], ["accounts": 0, "access_tokens": 2, "refresh_tokens": 0, "id_tokens": 0, "app_metadata": 0]),
        (["--expiring-within", "2h", "--expired"], ["accounts": 0, "access_tokens": 6, "refresh_tokens": 0, "id_tokens": 0, "app_metadata": 0]),
        (["--environment", "login.partner.microsoftonline.cn"], ["accounts": 1, "access_tokens": 1, "refresh_tokens": 0, "id_tokens": 0, "app_metadata": 0]),
        (["--username", "alice@CONTOSO.example"], ["accounts": 3, "access_tokens": 4, "refresh_tokens": 2, "id_tokens": 2, "app_metadata": 0]),
        (["--client-id", "china-client"], ["accounts": 0, "access_tokens": 1, "refresh_tokens": 0, "id_tokens": 0, "app_metadata": 0]),
        ([], ["accounts": 4, "access_tokens": 6, "refresh_tokens": 3, "id_tokens": 3, "app_metadata": 3]),
    ] as [([String], [String: Int])])
    func filtersSelectTheRecordsTheyName(arguments: [String], expected: [String: Int]) throws {
        try sampleStore { store in
            #expect(counts(try json(store, arguments)) == expected)
            // The table shows the same records, and the summary counts them.
            let table = try store.run(["inspect", "--now", "\(Self.now)", "--color", "never"] + arguments)
            let rows = table.stdout.split(separator: "\n").filter { line in
                ["  account ", "  access ", "  pop ", "  refresh ", "  id ", "  app "].contains { line.hasPrefix($0) }
            }
            #expect(rows.count == expected.values.reduce(0, +), "\(table.stdout)")
            let summary = try json(store, ["--summary"] + arguments)
            let records = try #require(summary["records"] as? [String: [String: Int]])
            for (name, count) in expected where count > 0 {
                #expect(records[name]?["total"] == count, "\(name) in \(summary)")
            }
        }
    }

    @Test func twoAccountsWithOneUsernameAreBothShownUnderTheirOwnLines() throws {
        try sampleStore { store in
            let run = try store.run(["inspect", "--username", "ALICE@contoso.example", "--now", "\(Self.now)", "--color", "never"])
            let people = run.stdout.split(separator: "\n").filter { $0.lowercased().hasPrefix("alice@contoso.example") }
            #expect(people.count == 2, "\(run.stdout)")
            #expect(!run.stdout.contains("bob@") && !run.stdout.contains("Apps"))
            let none = try store.run(["inspect", "--username", "nobody@contoso.example"])
            #expect(none.status == 0 && none.stdout.contains("(no record matches)"), "\(none.output)")
        }
    }

    @Test(arguments: [1, 2, 9, 16, 17, 19, 20])
    func limitShowsThatManyAndSaysWhetherMoreMatch(limit: Int) throws {
        try sampleStore { store in
            // 19 records: the sample's 17 and the added account and token.
            let document = try json(store, ["--limit", "\(limit)"])
            let shown = counts(document).values.reduce(0, +)
            #expect(shown == min(limit, 19))
            #expect(document["truncated"] as? Bool == (limit < 19) && document["limit"] as? Int == limit)
            let table = try store.run(["inspect", "--limit", "\(limit)", "--now", "\(Self.now)"])
            #expect(table.status == 0)
            #expect(table.stdout.contains("more match)") == (limit < 19), "\(table.stdout)")
            // Without --limit, the JSON has neither key.
            let all = try json(store, [])
            #expect(all["truncated"] == nil && all["limit"] == nil)
        }
    }

    /// A person with more credentials than the table keeps in memory for one group is read twice (to count, then to
    /// print): every row still shows, once, under one person line that counts them, and `--limit` still cuts it.
    @Test func aGroupLargerThanTheBufferIsShownWhole() throws {
        let tokens = InspectTable.groupBufferLimit + 100
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            try cache.write { writer in
                try writer.put(Account(homeAccountID: "big.tenant", environment: "login.microsoftonline.com", realm: "tenant", localAccountID: "big", username: "big@contoso.example", authorityType: "MSSTS"))
                for index in 0..<tokens {
                    try writer.put(AccessToken(
                        homeAccountID: "big.tenant", environment: "login.microsoftonline.com", clientID: "client-\(index % 3)",
                        realm: "tenant", target: "scope\(index).read", secret: Secret("at"), cachedAt: Self.now,
                        expiresOn: Self.now + 600 + Int64(index)
                    ))
                }
            }
            let run = try store.run(["inspect", "--now", "\(Self.now)", "--color", "never"])
            let lines = run.stdout.split(separator: "\n")
            let scopes = lines.filter { $0.hasPrefix("  access ") }.compactMap { $0.split(separator: " ").last }
            #expect(scopes.count == tokens && Set(scopes).count == tokens, "\(scopes.count) rows")
            let person = try #require(lines.first { $0.hasPrefix("big@contoso.example") })
            #expect(person.contains("3 clients") && person.contains("next expiry in 10 min"), "\(person)")
            let cut = try store.run(["inspect", "--limit", "\(tokens - 50)", "--now", "\(Self.now)"])
            #expect(cut.stdout.split(separator: "\n").filter { $0.hasPrefix("  access ") }.count == tokens - 51, "\(cut.stdout.suffix(300))")
            #expect(cut.stdout.contains("more match)"))
        }
    }

    @Test func summaryCountsKindsAndExpiryStates() throws {
        try sampleStore { store in
            let summary = try json(store, ["--summary"])
            let records = try #require(summary["records"] as? [String: [String: Int]])
            #expect(records["access_tokens"] == ["total": 6, "valid": 4, "refresh_due": 1, "expired": 1])
            #expect(records["refresh_tokens"]?["total"] == 3 && records["refresh_tokens"]?["valid"] == 3)
            #expect(records["accounts"] == ["total": 4] && records["app_metadata"] == ["total": 3])
            #expect(summary["home_accounts"] as? Int == 3 && summary["clients"] as? Int == 4)
        }
    }

    /// The JSON arrays hold exactly what the library lists, field for field.
    @Test func jsonIsTheLibrarysListing() throws {
        try sampleStore { store in
            let document = try json(store, ["--reveal-secrets"])
            let snapshot = try TokenStore.open(store.configuration).snapshot()
            func objects<E: CacheEntity>(_ list: [StoredEntity<E>]) -> Set<String> {
                Set(list.map { stored in
                    var object = stored.entity.jsonObject(revealSecrets: true)
                    object["revision"] = .integer(Int64(stored.revision))
                    object["fingerprint"] = .string(stored.fingerprint)
                    return JSONValue.object(object).description
                })
            }
            func fromDocument(_ name: String) throws -> Set<String> {
                let array = try #require(document[name] as? [Any])
                return Set(try array.map { element -> String in
                    let data = try JSONSerialization.data(withJSONObject: element)
                    return try JSONDecoder().decode(JSONValue.self, from: data).description
                })
            }
            #expect(try fromDocument("accounts") == objects(snapshot.accounts))
            #expect(try fromDocument("access_tokens") == objects(snapshot.accessTokens))
            #expect(try fromDocument("refresh_tokens") == objects(snapshot.refreshTokens))
            #expect(try fromDocument("id_tokens") == objects(snapshot.idTokens))
            #expect(try fromDocument("app_metadata") == objects(snapshot.appMetadata))
        }
    }

    @Test(arguments: [
        (["--json", "--wide"], "--output, --json and --wide"), (["--output", "json", "--wide"], "--output, --json and --wide"),
        (["--limit", "0"], "--limit must be at least 1"), (["--kind", "tokens"], "unknown kind 'tokens'"),
        (["--expiring-within", "soon"], "'soon' is not a duration"), (["--kind", "account", "--expired"], "select tokens"),
        (["--summary", "--reveal-secrets"], "--summary shows no records"), (["--account", "a.b", "--username", "c@d"], "--account and --username"),
        (["--color", "sometimes"], "--color"),
    ] as [([String], String)])
    func badOptionsAreUsageErrors(arguments: [String], message: String) throws {
        try sampleStore { store in
            let run = try store.run(["inspect"] + arguments)
            #expect(run.status == 64 && run.stderr.contains(message) && run.stdout.isEmpty, "\(run.output)")
        }
    }

    @Test func durationsReadAsPeopleWriteThem() throws {
        for (text, seconds) in [("90s", 90), ("15m", 900), ("15min", 900), ("2h", 7_200), ("7d", 604_800), ("1w", 604_800), (" 3 H ", 10_800)] as [(String, Int64)] {
            #expect(try Arguments.duration(text, option: "--x") == seconds, "\(text)")
        }
        for text in ["", "90", "h", "-5m", "1.5h", "5 years", "99999999999999999999d"] {
            #expect(throws: (any Error).self, "\(text)") { try Arguments.duration(text, option: "--x") }
        }
    }

    /// `inspect | head`: the reader leaves, the command stops at once, quietly and successfully.
    @Test func aReaderThatGoesAwayStopsTheListingQuietly() throws {
        try sampleStore { store in
            // Far more output than a pipe holds (64 KiB), so that the reader leaves while the tool still writes.
            let cache = try TokenStore.open(store.configuration)
            try cache.write { writer in
                for index in 0..<400 {
                    try writer.put(AccessToken(
                        homeAccountID: "many.tenant", environment: "login.microsoftonline.com", clientID: "client", realm: "tenant",
                        target: "scope\(index).read", secret: Secret(String(repeating: "s", count: 1_000)), cachedAt: Self.now,
                        expiresOn: Self.now + 3_600
                    ))
                }
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            let script = "set -o pipefail 2>/dev/null; \"\(CacheTool.binary.path)\" inspect --wide --reveal-secrets 2>err | head -c 10 >/dev/null; echo $? ; cat err"
            process.arguments = ["-c", script]
            process.environment = store.processEnvironment
            process.currentDirectoryURL = URL(fileURLWithPath: store.root)
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            // Exit 0 (a killing SIGPIPE would be 141) and nothing on standard error.
            #expect(text == "0\n", "\(text)")
        }
    }
}
