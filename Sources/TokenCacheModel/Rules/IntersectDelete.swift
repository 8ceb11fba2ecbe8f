/// The .NET rule with the JS refinement: a new access token replaces stored ones of the same bucket whose scopes
/// intersect the new ones, after removing the reserved scopes from both (two tokens sharing only
/// openid/profile/offline_access do not evict each other).
///
/// Why delete at all: the v2 endpoint returns every consented scope of the resource, so a new token for an
/// overlapping set supersedes the old one, and deleting it keeps a lookup from ever seeing two matches
/// (Docs/Semantics.md, "Intersect-delete"). The reserved scopes are ignored because AAD adds them to unrelated tokens;
/// counting them would let a Graph token evict a Key Vault token. The bucket (home account, environment group,
/// client, realm, token type, key id) is the caller's to check; this decides only the scope part.
///
/// If the new token has ONLY reserved scopes, the full sets are compared instead, as msal-js does: such a token
/// then still replaces an older token with an overlapping (reserved) target instead of piling up. The fallback
/// looks at the new token only, also as in msal-js, so it is not symmetric: a new `user.read openid` token does
/// not evict a stored `openid profile` token. Neither choice can create two matches for one lookup, since a
/// silent request always names a non-reserved scope (``ScopeSet/request(_:)``) and two tokens matching it share
/// that scope. A new token with an empty target evicts nothing.
///
/// For example:
///
/// ```swift
/// IntersectDelete.evicts(newTarget: try ScopeSet(parsing: "User.Read openid"),
///                        storedTarget: try ScopeSet(parsing: "user.read mail.read"))   // true
/// IntersectDelete.evicts(newTarget: try ScopeSet(parsing: "User.Read openid"),
///                        storedTarget: try ScopeSet(parsing: "files.read openid"))     // false
/// ```
package enum IntersectDelete {
    /// Whether saving an access token for `newTarget` deletes a stored one for `storedTarget` in the same bucket.
    package static func evicts(newTarget: ScopeSet, storedTarget: ScopeSet) -> Bool {
        let newScopes = newTarget.withoutReservedScopes
        if newScopes.isEmpty { return newTarget.intersects(storedTarget) }
        // `newScopes` holds no reserved scope, so the reserved scopes of `storedTarget` cannot intersect it:
        // comparing against the full stored set is the same as removing them from both, without the copy.
        return newScopes.intersects(storedTarget)
    }

    /// Whether ingesting `new` deletes a stored token of its bucket with this environment, target and expiry: one of
    /// `new`'s alias group whose scopes ``evicts(newTarget:storedTarget:)`` says the new ones supersede, or any that
    /// has expired by `now` (a dead token is never worth keeping, whatever its cloud).
    package static func supersedes(
        new newTarget: ScopeSet, environment newEnvironment: String, stored storedTarget: ScopeSet, environment storedEnvironment: String,
        expiresOn: Int64, now: Int64, aliases: EnvironmentAliases
    ) -> Bool {
        if expiresOn < now { return true }
        return aliases.areAliases(storedEnvironment, newEnvironment) && evicts(newTarget: newTarget, storedTarget: storedTarget)
    }
}
