import Foundation
import Testing

/// `cachetool lookup` for scripts and for people: `--exit-code` gives each outcome its own exit code, an unknown
/// username answers `interaction_required`, and the text view reads as sentences. On the sample store at
/// ``CacheToolTests/now``: alice's Outlook token is a hit, bob's Teams token a hit with its refresh time passed,
/// alice has no token for a new scope of Teams (refresh with its own refresh token), and a client without app
/// metadata is offered the family refresh token on trial.
@Suite struct LookupOutcomeTests {
    static let tenant = "0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f"
    static let outlook = "5e3ce6c0-2b1f-4285-8d4b-75ee78787346"
    static let teams = "8a3c9f6e-1f2b-4c3d-9e8f-5a6b7c8d9e0f"
    static let unknownClient = "99999999-1f2b-4c3d-9e8f-5a6b7c8d9e0f"

    static func sampleStore(_ body: (CLIStore) throws -> Void) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            try body(store)
        }
    }

    static func lookup(_ store: CLIStore, client: String, account: String, scopes: String, _ extra: [String] = []) throws -> CacheToolRun {
        try store.run(
            ["lookup", "--client-id", client, "--account", account, "--authority", "https://login.microsoftonline.com/\(tenant)",
             "--scopes", scopes, "--now", "\(CacheToolTests.now)"] + extra
        )
    }

    @Test(arguments: [
        (outlook, "alice@contoso.example", "User.Read", "hit", Int32(0)),
        (teams, "bob@contoso.example", "Files.Read.All", "hit", 0),
        (teams, "alice@contoso.example", "Mail.Send", "refresh", 10),
        (outlook, "nobody@contoso.example", "User.Read", "interaction_required", 11),
        (unknownClient, "bob@contoso.example", "User.Read", "interaction_required", 11),
    ] as [(String, String, String, String, Int32)])
    func eachOutcomeHasItsExitCodeWithExitCode(client: String, account: String, scopes: String, outcome: String, code: Int32) throws {
        try Self.sampleStore { store in
            let flagged = try Self.lookup(store, client: client, account: account, scopes: scopes, ["--exit-code", "--json"])
            #expect(flagged.exitedNormally && flagged.status == code, "\(flagged.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(flagged.stdout.utf8)) as? [String: Any], "\(flagged.output)")
            #expect(json["outcome"] as? String == outcome)
            // Without the flag every outcome exits 0, as before.
            let plain = try Self.lookup(store, client: client, account: account, scopes: scopes)
            #expect(plain.status == 0 && plain.stdout.hasPrefix("outcome: \(outcome) ("), "\(plain.output)")
        }
    }

    @Test func anUnknownUsernameAnswersInteractionRequiredNotNotFound() throws {
        try Self.sampleStore { store in
            let run = try Self.lookup(store, client: Self.outlook, account: "Nobody@Contoso.example", scopes: "User.Read", ["--json"])
            #expect(run.status == 0, "\(run.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.output)")
            #expect(json["outcome"] as? String == "interaction_required")
            #expect(json["access_token"] is NSNull && json["refresh_token"] is NSNull && json["account"] is NSNull)
            #expect(json["family_membership"] as? String == "member", "the client's app metadata is still read")
            #expect(run.stderr.contains("no account in the store has the username Nobody@Contoso.example"))
            // Commands to which an unknown account is an error still say so.
            #expect(try store.run(["remove-account", "--account", "nobody@contoso.example", "--all-clients"]).status == 66)
        }
    }

    @Test func theTextViewReadsAsSentences() throws {
        try Self.sampleStore { store in
            let hit = try Self.lookup(store, client: Self.outlook, account: "alice@contoso.example", scopes: "User.Read")
            #expect(hit.stdout == """
                outcome: hit (a valid access token is cached)
                access token: for User.Read Mail.Read openid profile email, in tenant \(Self.tenant); expires in 53 min
                refresh token: the family refresh token (family 1), shared by this app as a family member
                ID token: issued by tenant \(Self.tenant)
                account: alice@contoso.example, a work or school account (Microsoft Entra ID) in tenant \(Self.tenant)

                """, "\(hit.output)")
            let due = try Self.lookup(store, client: Self.teams, account: "bob@contoso.example", scopes: "Files.Read.All")
            #expect(due.stdout.hasPrefix("outcome: hit (a valid access token is cached, but its refresh time has passed: refresh it soon)\n"))
            #expect(due.stdout.contains("\nrefresh token: this app's own, issued to client \(Self.teams)\n"))
            let trial = try Self.lookup(store, client: Self.unknownClient, account: "alice@contoso.example", scopes: "Mail.Send")
            #expect(trial.stdout.hasPrefix("outcome: refresh (no valid access token is cached; the refresh token below can get one)\n"))
            #expect(trial.stdout.contains("refresh token: the family refresh token (family 1), offered on trial:"))
            for run in [hit, due, trial] {
                #expect(!run.stdout.contains("family membership") && !run.stdout.contains("MSSTS") && !run.stdout.contains("realm "))
            }
        }
    }

    /// `--include-secrets` is the name `export` uses too; `--reveal-secrets`, the older one, still works, unlisted.
    @Test func secretsAreShownUnderOneNameAndTheOldOneStillWorks() throws {
        try Self.sampleStore { store in
            let redacted = try Self.lookup(store, client: Self.outlook, account: "alice@contoso.example", scopes: "User.Read")
            #expect(!redacted.stdout.contains("secret:"))
            for flag in ["--include-secrets", "--reveal-secrets"] {
                let run = try Self.lookup(store, client: Self.outlook, account: "alice@contoso.example", scopes: "User.Read", [flag])
                #expect(run.status == 0 && run.stdout.contains("  secret: "), "\(flag): \(run.output)")
                let inspect = try store.run(["inspect", "--json", flag, "--now", "\(CacheToolTests.now)"])
                #expect(inspect.status == 0 && !inspect.stdout.contains("\"<redacted"), "\(flag)")
            }
            for command in ["lookup", "inspect"] {
                let help = try store.run([command, "--help"]).stdout
                #expect(help.contains("--include-secrets") && !help.contains("--reveal-secrets"), "\(command)")
            }
        }
    }
}
