public import Foundation

/// What ``TokenClient`` throws besides the store's own ``TokenCacheError`` and the caller's refresh closure's
/// errors (which reach the caller unchanged).
///
/// Messages never contain a token, an account id or a username; the account a sign-in is needed for travels in
/// ``accountHint``, which the description leaves out.
public struct TokenClientError: Error, Sendable, LocalizedError, CustomStringConvertible, CustomReflectable {
    /// What kind of failure this is. Compare with the static members: `error.code == .interactionRequired`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `interactionRequired`.
        public let name: String
        init(_ name: String) { self.name = name }
        /// The code's ``name``.
        public var description: String { name }

        /// The cache holds neither a usable access token nor a refresh token for the request: the user must sign
        /// in (interactively, or with a device code). ``TokenClientError/accountHint`` names the account to
        /// pre-fill (`login_hint`), when the cache knows it.
        public static let interactionRequired = Code("interactionRequired")
        /// The token endpoint's response did not yield a token that answers the request (its scopes do not cover
        /// the requested ones, or it expires within the usability margin). The response was stored.
        public static let unusableResponse = Code("unusableResponse")
        /// A refresh was needed, and ``TokenClient/token(for:)`` was called on a client made without a refresh
        /// closure.
        public static let refreshNotConfigured = Code("refreshNotConfigured")
    }

    /// The account a sign-in is needed for, as far as the cache knows it. Not secret, but personal data: kept out of
    /// every description (printing, interpolating or dumping it, or the error, shows no identifier).
    public struct AccountHint: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// The home account id the request named.
        public var homeAccountID: String
        /// The account's username (`preferred_username`), when an Account record names it: the `login_hint`.
        public var username: String?

        /// A hint naming an account.
        public init(homeAccountID: String, username: String? = nil) {
            self.homeAccountID = homeAccountID
            self.username = username
        }

        /// `AccountHint(<redacted>)`.
        public var description: String { "AccountHint(<redacted>)" }
        /// No children: `dump` shows no identifier.
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human-readable explanation with no token, account id or username in it.
    public let message: String
    /// For ``Code/interactionRequired``: the account to sign in again, when the request named one.
    public let accountHint: AccountHint?
    /// Whether the token endpoint refused the refresh token itself (``refreshTokenRefused(_:accountHint:)``), as
    /// opposed to asking for an interaction for this request only (a claims challenge, consent for one resource).
    public let refusesRefreshToken: Bool

    init(_ code: Code, _ message: String, accountHint: AccountHint? = nil, refusesRefreshToken: Bool = false) {
        self.code = code
        self.message = message
        self.accountHint = accountHint
        self.refusesRefreshToken = refusesRefreshToken
    }

    /// The error a refresh closure throws when the token endpoint asks for an interaction for this request
    /// (`interaction_required`, `invalid_grant` with a claims challenge or a `suberror` such as `consent_required` for
    /// one resource): the user must sign in for it. It reaches every caller waiting on the refresh, as any error the
    /// closure throws; the refresh token stays usable for other requests. ``TokenClient/token(for:refresh:)``
    /// never deletes the refresh token for it (a family token is other apps' too).
    public static func interactionRequired(_ message: String = "the token endpoint refused the refresh token: the user must sign in", accountHint: AccountHint? = nil) -> TokenClientError {
        TokenClientError(.interactionRequired, message, accountHint: accountHint)
    }

    /// The error a refresh closure throws when the token endpoint refused the refresh token itself: `invalid_grant`
    /// with no claims challenge and no `suberror` (the token expired, was revoked, or was redeemed already). As
    /// ``interactionRequired(_:accountHint:)``, and the client also records the refusal in the store, so that no
    /// process offers that token to the token endpoint again (a replay, which reuse detection answers by revoking
    /// the whole grant) until a newer one is stored.
    public static func refreshTokenRefused(
        _ message: String = "the token endpoint refused the refresh token (invalid_grant): the user must sign in", accountHint: AccountHint? = nil
    ) -> TokenClientError {
        TokenClientError(.interactionRequired, message, accountHint: accountHint, refusesRefreshToken: true)
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
    /// The code and the message: `dump` shows no account hint.
    public var customMirror: Mirror { Mirror(self, children: ["code": code, "message": message], displayStyle: .struct) }
    /// The ``message``.
    public var errorDescription: String? { message }
}
