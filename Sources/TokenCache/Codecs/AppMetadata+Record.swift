package import TokenCacheRecords

extension AppMetadata: StorableEntity {
    package static let modelledFieldNames: Set<String> = ["client_id", "environment", "family_id"]

    package func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.set("client_id", clientID)
        encoder.set("environment", environment)
        encoder.set("family_id", familyID)
        encoder.merge(additionalFields)
        return encoder.map
    }

    package init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        self.init(
            clientID: try decoder.string("client_id"),
            environment: try decoder.string("environment"),
            familyID: try decoder.optionalString("family_id"),
            additionalFields: try decoder.additionalFields()
        )
    }

    package func validate() throws(TokenCacheError) {
        try Self.requireNonEmpty(clientID, "clientID")
        try Self.requireNonEmpty(environment, "environment")
        try validateAdditionalFields()
    }

    package var homeAccountIDForIndex: String? { nil }
    package var clientIDForFilter: String? { clientID }
}
