package import TokenCacheRecords

extension RefreshToken: StorableEntity {
    package static let modelledFieldNames: Set<String> = [
        "home_account_id", "environment", "client_id", "secret", "family_id", "target", "realm",
        "last_modification_time", "user_assertion_hash", "expires_on",
    ]

    package func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.setCredential("RefreshToken", homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        encoder.set("family_id", familyID)
        encoder.set("target", target)
        encoder.set("realm", realm)
        encoder.set("last_modification_time", lastModificationTime)
        encoder.set("user_assertion_hash", userAssertionHash)
        encoder.set("expires_on", expiresOn)
        encoder.merge(additionalFields)
        return encoder.map
    }

    package init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        let credential = try decoder.credential()
        self.init(
            homeAccountID: credential.homeAccountID, environment: credential.environment, clientID: credential.clientID,
            secret: credential.secret,
            familyID: try decoder.optionalString("family_id"),
            target: try decoder.optionalString("target"),
            realm: try decoder.optionalString("realm"),
            lastModificationTime: try decoder.optionalInteger("last_modification_time"),
            userAssertionHash: try decoder.optionalString("user_assertion_hash"),
            expiresOn: try decoder.optionalInteger("expires_on"),
            additionalFields: try decoder.additionalFields()
        )
    }

    package func validate() throws(TokenCacheError) {
        // A token of an on-behalf-of partition is found by the partition: its account may be unknown (a response
        // without client_info).
        let partitioned = !(userAssertionHash?.isEmpty ?? true)
        try Self.validateCredential(homeAccountID: partitioned ? nil : homeAccountID, environment: environment, clientID: clientID, secret: secret)
        if let target {
            do { _ = try ScopeSet(parsing: target) } catch {
                throw TokenCacheError(.invalidArgument, "RefreshToken.target contains a character outside the scope alphabet")
            }
        }
        try validateAdditionalFields()
    }

    package var homeAccountIDForIndex: String? { homeAccountID }
    package var clientIDForFilter: String? { clientID }
}
