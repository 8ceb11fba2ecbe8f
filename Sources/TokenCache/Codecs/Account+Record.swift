package import TokenCacheRecords

extension Account: StorableEntity {
    package static let modelledFieldNames: Set<String> = [
        "home_account_id", "environment", "realm", "local_account_id", "username", "authority_type",
        "account_source", "name", "given_name", "family_name", "middle_name", "alternative_account_id", "client_info",
    ]

    package func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.set("home_account_id", homeAccountID)
        encoder.set("environment", environment)
        encoder.set("realm", realm)
        encoder.set("local_account_id", localAccountID)
        encoder.set("username", username)
        encoder.set("authority_type", authorityType)
        encoder.set("account_source", accountSource)
        encoder.set("name", name)
        encoder.set("given_name", givenName)
        encoder.set("family_name", familyName)
        encoder.set("middle_name", middleName)
        encoder.set("alternative_account_id", alternativeAccountID)
        encoder.set("client_info", clientInfo)
        encoder.merge(additionalFields)
        return encoder.map
    }

    package init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        self.init(
            homeAccountID: try decoder.string("home_account_id"),
            environment: try decoder.string("environment"),
            realm: try decoder.string("realm"),
            localAccountID: try decoder.optionalString("local_account_id"),
            username: try decoder.optionalString("username"),
            authorityType: try decoder.string("authority_type"),
            accountSource: try decoder.optionalString("account_source"),
            name: try decoder.optionalString("name"),
            givenName: try decoder.optionalString("given_name"),
            familyName: try decoder.optionalString("family_name"),
            middleName: try decoder.optionalString("middle_name"),
            alternativeAccountID: try decoder.optionalString("alternative_account_id"),
            clientInfo: try decoder.optionalString("client_info"),
            additionalFields: try decoder.additionalFields()
        )
    }

    package func validate() throws(TokenCacheError) {
        try Self.requireNonEmpty(homeAccountID, "homeAccountID")
        try Self.requireNonEmpty(environment, "environment")
        try Self.requireNonEmpty(authorityType, "authorityType")
        try validateAdditionalFields()
    }

    package var homeAccountIDForIndex: String? { homeAccountID }
    package var clientIDForFilter: String? { nil }
}
