/// Which refresh tokens to try for a client (Docs/Semantics.md, "Refresh tokens and families").
///
/// The Python/.NET order. A family refresh token (FOCI) redeems for any client of the family, so it is tried
/// first whenever the client may be a member; when app metadata shows the client is not, its family status is
/// known and only its own token is tried. Among several refresh tokens of one owner the store picks the newest.
///
/// A client with no app metadata gets ``familyThenOwn(familyID:)`` like a known member. In that case a failed
/// redemption of the family token must not delete it (the client may just not be a member); that
/// is the redeeming client's business, and it can tell the cases apart by whether it had app metadata.
package enum RefreshTokenPlan: Sendable, Hashable {
    /// App metadata says family `id`, or there is no app metadata for the client: try the family refresh token
    /// first, then the client's own.
    case familyThenOwn(familyID: String)
    /// App metadata exists without a family: only the client's own refresh token.
    case ownOnly

    /// The only family in use: the server sends `"foci": "1"` (msal-dotnet `TheOnlyFamilyId`, msal-js
    /// `THE_FAMILY_ID`, msal-python "we have only 1 family for now"). Tried when the family status is unknown.
    package static let theOnlyFamilyID = "1"

    /// The plan for a client, from its app metadata.
    ///
    /// | `appMetadataExists` | `familyID`                      | plan                             |
    /// |---------------------|---------------------------------|----------------------------------|
    /// | `false`             | ignored                         | `.familyThenOwn(familyID: "1")`  |
    /// | `true`              | `nil` or `""`                   | `.ownOnly`                       |
    /// | `true`              | `id`, non-empty (in practice "1") | `.familyThenOwn(familyID: id)` |
    ///
    /// - Parameters:
    ///   - appMetadataExists: Whether the cache holds app metadata for the client in the request's alias group.
    ///   - familyID: The app metadata's `family_id`; `nil` and `""` both mean "no family" (msal-dotnet treats
    ///     null as ""). Ignored without app metadata, where the family status is unknown.
    package static func plan(appMetadataExists: Bool, familyID: String?) -> RefreshTokenPlan {
        guard appMetadataExists else { return .familyThenOwn(familyID: theOnlyFamilyID) }
        guard let familyID, !familyID.isEmpty else { return .ownOnly }
        return .familyThenOwn(familyID: familyID)
    }
}
