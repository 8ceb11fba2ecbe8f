import TokenCache

/// The text view of `cachetool lookup`: one line per part of the answer, each a sentence a person would say (what
/// was found and what it means for the request), not the JSON's field names and values; `--json` is for scripts.
enum LookupText {
    static func describe(_ result: SilentLookupResult, revealSecrets: Bool, now: Int64) throws -> String {
        let companions = try result.companions
        var lines = ["outcome: " + outcome(result)]
        if let token = result.accessToken?.entity {
            let scopes = token.target.isEmpty ? "no scopes" : token.target
            lines.append("access token: for \(scopes), in tenant \(token.realm); \(expiry(token.expiresOn, now: now))")
            if revealSecrets { lines.append("  secret: \(token.secret.reveal())") }
        }
        if let token = companions.refreshToken?.entity {
            lines.append("refresh token: " + refreshToken(token, membership: companions.familyMembership))
            if revealSecrets { lines.append("  secret: \(token.secret.reveal())") }
        }
        if let token = companions.idToken?.entity { lines.append("ID token: issued by tenant \(token.realm)") }
        if let account = companions.account?.entity {
            let name = account.username.map { $0.isEmpty ? account.homeAccountID : $0 } ?? account.homeAccountID
            lines.append("account: \(name), \(kind(of: account)) in tenant \(account.realm)")
        }
        return lines.map(Terminal.sanitize).joined(separator: "\n")
    }

    /// The outcome's name (as `--json` and scripts spell it), then what it means.
    static func outcome(_ result: SilentLookupResult) -> String {
        switch result.outcome {
        case .hit where result.refreshRecommended:
            "hit (a valid access token is cached, but its refresh time has passed: refresh it soon)"
        case .hit: "hit (a valid access token is cached)"
        case .refresh: "refresh (no valid access token is cached; the refresh token below can get one)"
        case .interactionRequired: "interaction_required (nothing cached can get a token: the user must sign in)"
        }
    }

    /// "expires in 53 min", "expired 2 h ago".
    static func expiry(_ expiresOn: Int64, now: Int64) -> String {
        let relative = RelativeTime.describe(expiresOn, now: now)
        return expiresOn >= now ? "expires " + relative : relative
    }

    /// Whose refresh token it is and why this client may use it.
    static func refreshToken(_ token: RefreshToken, membership: SilentLookupResult.FamilyMembership) -> String {
        guard let familyID = token.familyID else { return "this app's own, issued to client \(token.clientID)" }
        let family = "the family refresh token (family \(familyID))"
        switch membership {
        case .member:
            return family + ", shared by this app as a family member"
        case .unknown:
            return family + ", offered on trial: no app metadata says whether this app is in the family, "
                + "so if redeeming it fails, keep it (other apps use it)"
        case .notMember:
            return family + ", though this app's metadata says it is not in the family"
        }
    }

    /// The kind of account its authority type names, in words.
    static func kind(of account: Account) -> String {
        switch account.authorityType.uppercased() {
        case "MSSTS": "a work or school account (Microsoft Entra ID)"
        case "MSA": "a personal Microsoft account"
        case "ADFS": "an AD FS account"
        default: "an account of authority type \(account.authorityType)"
        }
    }
}
