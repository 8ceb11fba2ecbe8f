package import TokenCacheRecords

extension IDToken: StorableEntity {
    package static let modelledFieldNames: Set<String> = ["home_account_id", "environment", "client_id", "realm", "secret"]

    package func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.setCredential("IdToken", homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        encoder.set("realm", realm)
        encoder.merge(additionalFields)
        return encoder.map
    }

    package init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        let credential = try decoder.credential()
        self.init(
            homeAccountID: credential.homeAccountID, environment: credential.environment, clientID: credential.clientID,
            realm: try decoder.string("realm"),
            secret: credential.secret,
            additionalFields: try decoder.additionalFields()
        )
    }

    package func validate() throws(TokenCacheError) {
        try Self.validateCredential(homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        try validateAdditionalFields()
    }

    package var homeAccountIDForIndex: String? { homeAccountID }
    package var clientIDForFilter: String? { clientID }
}
