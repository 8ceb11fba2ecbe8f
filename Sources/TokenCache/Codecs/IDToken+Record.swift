internal import TokenCacheRecords

extension IDToken: StorableEntity {
    static let modelledFieldNames: Set<String> = ["home_account_id", "environment", "client_id", "realm", "secret"]

    func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.setCredential("IdToken", homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        encoder.set("realm", realm)
        encoder.merge(additionalFields)
        return encoder.map
    }

    init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        let credential = try decoder.credential()
        self.init(
            homeAccountID: credential.homeAccountID, environment: credential.environment, clientID: credential.clientID,
            realm: try decoder.string("realm"),
            secret: credential.secret,
            additionalFields: try decoder.additionalFields()
        )
    }

    func validate() throws(TokenCacheError) {
        try Self.validateCredential(homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        try validateAdditionalFields()
    }

    var homeAccountIDForIndex: String? { homeAccountID }
    var clientIDForFilter: String? { clientID }
}
