internal import TokenCacheRecords

/// Which stored realms a silent lookup may use (Docs/Semantics.md, "Realms").
///
/// Writers disagree on the realm of a token obtained through a tenantless authority: msal-dotnet and msal-js
/// store the id_token's `tid`, msal-python and msal-go store `common` literally. A query for `common` therefore
/// tries the literal realm first (caches written by Python/Go) and then the account's home tenant, which is what
/// .NET resolves a tenantless authority to for a known account.
package enum RealmResolution {
    /// The authority segments that name no tenant.
    private static let tenantless: [[UInt8]] = ["common", "organizations", "consumers"].map { Array($0.utf8) }

    /// common, organizations, consumers (ASCII case-insensitive).
    package static func isTenantless(_ realm: String) -> Bool {
        // Compared in place: this runs on every lookup, whose realm is almost always a tenant id.
        tenantless.contains { name in name.count == realm.utf8.count && realm.utf8.elementsEqual(name) { ASCII.lowercased($0) == $1 } }
    }

    /// The realms to try, in order: the query realm exactly (case-insensitive), then, when it is tenantless, the
    /// account's home tenant (the utid of a `uid.utid` home account id, i.e. the part after the LAST '.'; none if
    /// the id has no '.').
    ///
    /// The realms come back as given (the query realm unchanged, the utid as spelled in the id); the caller
    /// compares them ASCII-case-insensitively. The home tenant is left out when it equals the query realm, so no
    /// realm is tried twice.
    ///
    /// For example:
    ///
    /// ```swift
    /// RealmResolution.candidates(queryRealm: "Organizations", homeAccountID: "uid.tid-1")  // ["Organizations", "tid-1"]
    /// RealmResolution.candidates(queryRealm: "tid-2", homeAccountID: "uid.tid-1")          // ["tid-2"]
    /// ```
    @inlinable
    package static func candidates(queryRealm: String, homeAccountID: String) -> [String] {
        guard isTenantless(queryRealm), let home = homeTenant(ofHomeAccountID: homeAccountID),
            !ASCII.equalIgnoringCase(home, queryRealm)
        else { return [queryRealm] }
        return [queryRealm, home]
    }

    /// The utid of a `uid.utid` home account id: the text after the last `.`, or `nil` when the id has no `.` or
    /// nothing follows it.
    ///
    /// The last `.` because only the utid is known to be dot-free (a tenant GUID); B2C uids carry the policy name
    /// (`uid-b2c_1_signin.utid`). ADFS ids are the id_token `sub`, base64 without `.`, and have no home tenant.
    package static func homeTenant(ofHomeAccountID id: String) -> String? {
        guard let dot = id.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let tenant = id.utf8[id.utf8.index(after: dot)...]
        return tenant.isEmpty ? nil : String(tenant)
    }
}
