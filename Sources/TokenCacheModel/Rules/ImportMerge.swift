/// Which of two entities with the same identity an import keeps: the one already there, or the incoming one.
///
/// An import meets an identity twice when the store already holds it, or when the file itself holds it twice
/// (MSAL Python keeps one refresh token per scope set, which are one token here). The rule: the later write wins,
/// judged by `cached_at` (for refresh tokens, `last_modification_time`, their write time; for ID tokens, which
/// record none, the JWT's `iat`, its issue time); on a tie, the later `expires_on` (ID tokens: `exp`); on a tie
/// again, the one met first stays: the stored one, so re-importing the same file changes nothing, and within one
/// file the earlier entry. For refresh tokens that is the one MSAL Python redeems first: it tries them newest
/// first with a stable sort, so same-second tokens in the order its cache (and so its file) lists them. An absent
/// time counts as earlier than any present one: an entity that says when it was written beats one that does not.
/// Accounts and app metadata carry no time and therefore always keep the existing one.
package enum ImportMerge {
    /// The two times the rule compares; nil when the entity has none.
    package struct Stamp: Sendable, Hashable {
        package var writtenAt: Int64?
        package var expiresOn: Int64?

        package init(writtenAt: Int64?, expiresOn: Int64?) {
            self.writtenAt = writtenAt
            self.expiresOn = expiresOn
        }
    }

    /// Whether the incoming entity replaces the existing one.
    package static func incomingWins(existing: Stamp, incoming: Stamp) -> Bool {
        if let order = compare(existing.writtenAt, incoming.writtenAt) { return order }
        if let order = compare(existing.expiresOn, incoming.expiresOn) { return order }
        return false
    }

    /// true if `incoming` is later, false if earlier, nil if equal (absent before present).
    private static func compare(_ existing: Int64?, _ incoming: Int64?) -> Bool? {
        switch (existing, incoming) {
        case (nil, nil): nil
        case (nil, .some): true
        case (.some, nil): false
        case (.some(let old), .some(let new)): old == new ? nil : new > old
        }
    }

    package static func stamp(of token: AccessToken) -> Stamp { Stamp(writtenAt: token.cachedAt, expiresOn: token.expiresOn) }
    package static func stamp(of token: RefreshToken) -> Stamp { Stamp(writtenAt: token.lastModificationTime, expiresOn: token.expiresOn) }
    package static func stamp(of account: Account) -> Stamp { Stamp(writtenAt: nil, expiresOn: nil) }
    package static func stamp(of metadata: AppMetadata) -> Stamp { Stamp(writtenAt: nil, expiresOn: nil) }

    /// Whether an incoming refresh token replaces a stored one of its identity. As ``incomingWins(existing:incoming:)``,
    /// except that when neither carries any time (MSAL .NET, Go and JS write no `last_modification_time`), a token
    /// with another secret wins: it is the one the file being imported holds now, and keeping the stored one would
    /// make a rotated token unimportable. The same token again still changes nothing.
    package static func refreshTokenWins(existing: RefreshToken, incoming: RefreshToken) -> Bool {
        credentialWins(existing: stamp(of: existing), incoming: stamp(of: incoming), sameSecret: existing.secret == incoming.secret)
    }

    /// Whether an incoming ID token replaces a stored one of its identity: the later issued (`iat`, then `exp`), as
    /// for refresh tokens; one that is not a JWT with those claims replaces a timeless stored one when it differs.
    /// A sign-in or refresh re-issues the ID token, so the newer one must win a re-import, not the first one stored.
    /// `stamp` reads a token's issue times from its JWT (`iat` as the write time, `exp`): the model parses no JWT.
    package static func idTokenWins(existing: IDToken, incoming: IDToken, stamp: (IDToken) -> Stamp) -> Bool {
        credentialWins(existing: stamp(existing), incoming: stamp(incoming), sameSecret: existing.secret == incoming.secret)
    }

    private static func credentialWins(existing: Stamp, incoming: Stamp, sameSecret: Bool) -> Bool {
        if existing == Stamp(writtenAt: nil, expiresOn: nil) && incoming == existing { return !sameSecret }
        return incomingWins(existing: existing, incoming: incoming)
    }

    /// ``incomingWins(existing:incoming:)`` on the stamps `stamp` gives, as a judge of (existing, incoming).
    package static func laterWins<Entity>(_ stamp: @escaping (Entity) -> Stamp) -> (Entity, Entity) -> Bool {
        { incomingWins(existing: stamp($0), incoming: stamp($1)) }
    }

    /// The entity an import keeps of `existing` and `incoming` (same identity).
    package static func winner<Entity>(existing: Entity, incoming: Entity, stamp: (Entity) -> Stamp) -> Entity {
        incomingWins(existing: stamp(existing), incoming: stamp(incoming)) ? incoming : existing
    }
}
