/// The OpenID Connect scopes that say what the client wants from the sign-in, not what the access token
/// grants.
///
/// AAD adds them to responses (`target` often reads `openid profile email User.Read`), so they say nothing
/// about which resource a token is for. This is msal-dotnet's list (`OAuthConstants.cs`): `email` is *not*
/// reserved, unlike in msal-js, because this engine follows .NET here (Docs/Semantics.md, "Scopes").
package enum ReservedScopes {
    /// openid, profile, offline_access: removed from requests (the .NET rule) and ignored for intersect-delete.
    package static let all: Set<String> = ["openid", "profile", "offline_access"]

    /// Whether a normalized (lower-cased) scope is one of ``all``: three byte comparisons, cheaper than hashing the
    /// scope into the set on every lookup.
    package static func contains(_ scope: String) -> Bool {
        scope == "openid" || scope == "profile" || scope == "offline_access"
    }
}

extension ScopeSet {
    /// A silent request's scopes: normalized, minus the reserved scopes.
    ///
    /// The reserved scopes are removed because a cached token's `target` need not list them. What is left must
    /// be non-empty: the empty set is a subset of every `target`, so an empty request would match any access
    /// token in the bucket. msal-js would instead keep `openid`/`profile` for an OIDC-only request; this engine
    /// makes such a request an error, since no access token is *for* those scopes (Docs/Semantics.md, "Scopes").
    ///
    /// For example:
    ///
    /// ```swift
    /// try ScopeSet.request(["User.Read openid", "offline_access user.read"]).canonical  // "user.read"
    /// try ScopeSet.request(["openid profile"])                                         // throws
    /// ```
    ///
    /// - Parameter scopes: Scopes, each element possibly several separated by ASCII whitespace.
    /// - Throws: TokenCacheError .invalidArgument when nothing is left (an empty request would match every token),
    ///   or a scope is malformed.
    package static func request(_ scopes: [String]) throws -> ScopeSet {
        let requested = try ScopeSet(scopes).withoutReservedScopes
        guard !requested.isEmpty else {
            throw TokenCacheError(
                .invalidArgument,
                "the request names no scope besides openid, profile and offline_access; an empty request would match every access token"
            )
        }
        return requested
    }

    /// The set minus the reserved scopes (for the intersect-delete rule).
    package var withoutReservedScopes: ScopeSet {
        normalized.contains(where: ReservedScopes.contains) ? subtracting(ReservedScopes.all) : self
    }
}
