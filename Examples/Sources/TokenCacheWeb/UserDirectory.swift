import Synchronization
import TokenCacheClient

/// Which account user N is: what a real web app keeps in its session after the sign-in (the home account id). The
/// host that signed a user in knows it; another host finds the account by its username in the shared store once,
/// then remembers it. A home account id never changes, so a remembered one stays right after a sign-out (the
/// token request then finds no refresh token and answers `interaction_required`).
final class UserDirectory: Sendable {
    private let known = Mutex<[Int: String]>([:])
    let clientID: String

    init(clientID: String) { self.clientID = clientID }

    /// The username the identity provider gives user N.
    static func username(of user: Int) -> String { "user\(user)@contoso.example" }

    func remember(_ user: Int, homeAccountID: String) { known.withLock { $0[user] = homeAccountID } }

    /// User N's home account id, or nil when no account of theirs is in the store.
    func homeAccountID(of user: Int, in client: TokenClient) async throws -> String? {
        if let id = known.withLock({ $0[user] }) { return id }
        guard let account = try await client.accounts(clientID: clientID, username: Self.username(of: user)).first else { return nil }
        remember(user, homeAccountID: account.homeAccountID)
        return account.homeAccountID
    }
}
