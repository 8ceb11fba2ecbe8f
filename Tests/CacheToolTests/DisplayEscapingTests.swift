import Foundation
import Testing
import TokenCache

/// Attacker-influenced strings (a username from an ID token) never reach the terminal or a JSON document with
/// bidi overrides, zero-width characters or C1 controls raw; JSON still carries the exact value, escaped.
@Suite struct DisplayEscapingTests {
    static let hostile = "ad\u{202E}nimda\u{202C}\u{200B}\u{9B}31m\u{2066}x\u{FEFF}\u{7F}\u{E0041}@contoso.example"
    static let raw: [Unicode.Scalar] = ["\u{202E}", "\u{202C}", "\u{200B}", "\u{9B}", "\u{2066}", "\u{FEFF}", "\u{7F}", "\u{E0041}"]

    @Test(arguments: [["inspect"], ["inspect", "--json"], ["accounts"], ["accounts", "--json"]])
    func hostileCharactersAreEscaped(arguments: [String]) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            try cache.put(Account(
                homeAccountID: "u.t", environment: "login.microsoftonline.com", realm: "t", localAccountID: "u",
                username: Self.hostile, authorityType: "MSSTS"
            ))
            let run = try store.run(arguments)
            #expect(run.status == 0, "\(run.output)")
            for scalar in Self.raw {
                #expect(!run.stdout.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) printed raw")
            }
            if arguments.contains("--json") {
                // Escaped, not lost: the document still holds the exact username.
                #expect(run.stdout.contains("\\u202e") && run.stdout.contains("\\udb40\\udc41"), "\(run.stdout)")
                let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
                let accounts = try #require(document["accounts"] as? [[String: Any]])
                let username = accounts.first?["username"] as? String
                    ?? (accounts.first?["profiles"] as? [[String: Any]])?.first?["username"] as? String
                #expect(username == Self.hostile)
            } else {
                #expect(run.stdout.contains("\\u{202e}") && run.stdout.contains("\\u{9b}"), "\(run.stdout)")
            }
        }
    }

    /// Every character a terminal could act on or that reorders or hides text: C0, DEL, C1, every format character
    /// (Cf) of the Unicode version this toolchain knows, the line and paragraph separators.
    static let everyDangerousScalar: [Unicode.Scalar] = {
        var scalars = (0x00..<0x20).compactMap(Unicode.Scalar.init) + (0x7F..<0xA0).compactMap(Unicode.Scalar.init)
        scalars += [Unicode.Scalar(0x2028)!, Unicode.Scalar(0x2029)!]
        for value in UInt32(0xA0)...0x10FFFF {
            if let scalar = Unicode.Scalar(value), scalar.properties.generalCategory == .format { scalars.append(scalar) }
        }
        return scalars
    }()

    /// Each dangerous character, in a username, a realm, a scope list and an unknown field, reaches no output raw,
    /// in any view; with colour on, the only escape sequences are the tool's own colours.
    @Test(arguments: [
        ["inspect", "--color", "never"], ["inspect", "--color", "always"], ["inspect", "--wide", "--color", "always"],
        ["inspect", "--json"], ["inspect", "--summary", "--color", "always"], ["accounts"], ["accounts", "--json"],
    ])
    func noControlOrFormatCharacterReachesTheTerminal(arguments: [String]) throws {
        let scalars = Self.everyDangerousScalar
        #expect(scalars.count > 200 && scalars.contains("\u{202E}") && scalars.contains("\u{2066}") && scalars.contains("\u{E0001}"))
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            // In chunks, so that each record stays a plausible size.
            let chunks = stride(from: 0, to: scalars.count, by: 40).map { Array(scalars[$0..<min($0 + 40, scalars.count)]) }
            for (index, chunk) in chunks.enumerated() {
                var text = String.UnicodeScalarView()
                for scalar in chunk { text.append(contentsOf: "x".unicodeScalars); text.append(scalar) }
                let hostile = String(text)
                let home = "uid\(index).utid"
                try cache.put(Account(
                    homeAccountID: home, environment: "login.microsoftonline.com", realm: "utid\(hostile)", localAccountID: "uid",
                    username: "user\(hostile)@contoso.example", authorityType: "MSSTS", additionalFields: ["note": .string(hostile)]
                ))
                try cache.put(AccessToken(
                    homeAccountID: home, environment: "login.microsoftonline.com", clientID: "client", realm: "utid\(hostile)",
                    target: "scope.read", secret: Secret("at"), cachedAt: 0, expiresOn: 4_000_000_000,
                    additionalFields: ["note": .string(hostile)]
                ))
            }
            let run = try store.run(arguments, extra: ["COLUMNS": "400"])
            #expect(run.status == 0, "\(run.output)")
            // The tool's own colours: ESC [ digits m. Anything else is a raw character from the data.
            let visible = run.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
            let dangerous = Set(scalars).subtracting(["\n"])
            let leaked = Set(visible.unicodeScalars.filter { dangerous.contains($0) }.map { String($0.value, radix: 16) })
            #expect(leaked.isEmpty, "raw in \(arguments): \(leaked.sorted())")
            #expect(!run.stdout.unicodeScalars.contains("\u{9B}") && !visible.contains("\u{1B}"))
        }
    }
}
