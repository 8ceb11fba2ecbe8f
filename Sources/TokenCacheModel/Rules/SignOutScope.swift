internal import TokenCacheRecords

/// Which of an account's records a sign-out removes (Docs/Semantics.md, "Sign-out"), judged record by record.
///
/// For one client: its access tokens, ID tokens and refresh tokens, and the family's refresh token when the client's
/// app metadata names that family (a family token is every member's: a client that is not known to be a member
/// leaves it alone). For every client (`clientID == nil`): every token. Accounts (the profiles) go in both cases,
/// as MSAL removes them. An environment restricts all of it to that host's alias group; none means every cloud.
/// App metadata is never removed: it describes the client, not the user.
package struct SignOutScope {
    /// The client signing out; nil for every client.
    package let clientID: String?
    /// Only records of this host's alias group; nil for every cloud.
    package let environment: String?
    /// The family the client's app metadata names, if any.
    package let familyID: String?
    package let aliases: EnvironmentAliases

    package init(clientID: String?, environment: String?, familyID: String?, aliases: EnvironmentAliases) {
        self.clientID = clientID
        self.environment = environment
        self.familyID = familyID
        self.aliases = aliases
    }

    package func removes(_ token: AccessToken) -> Bool { inScope(token.environment) && isTheClient(token.clientID) }

    package func removes(_ token: IDToken) -> Bool { inScope(token.environment) && isTheClient(token.clientID) }

    package func removes(_ token: RefreshToken) -> Bool {
        guard inScope(token.environment) else { return false }
        switch token.owner {
        case .client(let owner): return isTheClient(owner)
        case .family(let family): return clientID == nil || family == familyID
        }
    }

    package func removes(_ account: Account) -> Bool { inScope(account.environment) }

    private func inScope(_ host: String) -> Bool {
        environment.map { aliases.areAliases(host, $0) } ?? true
    }

    private func isTheClient(_ other: String) -> Bool {
        clientID.map { ASCII.equalIgnoringCase($0, other) } ?? true
    }
}
