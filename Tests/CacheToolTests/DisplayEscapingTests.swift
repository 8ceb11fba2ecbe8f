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
}
