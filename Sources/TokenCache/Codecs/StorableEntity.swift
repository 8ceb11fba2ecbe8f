package import TokenCacheRecords

extension CacheEntity {
    /// The library's side of this entity type. `CacheEntity` is closed to the five entity types (see
    /// ``CacheEntity/witness``), each of one kind, so the kind names the type.
    static var storableType: any StorableEntity.Type {
        switch kind {
        case .account: Account.self
        case .accessToken: AccessToken.self
        case .refreshToken: RefreshToken.self
        case .idToken: IDToken.self
        case .appMetadata: AppMetadata.self
        }
    }

    /// This entity as the library's side of its type (every ``CacheEntity`` is one; see ``CacheEntity/witness``).
    package var storable: any StorableEntity {
        guard let storable = self as? any StorableEntity else { preconditionFailure("\(Self.self) is a cache entity but is not storable") }
        return storable
    }
}

/// The library-internal side of an entity: how it maps to a field map and to a storage key.
package protocol StorableEntity: CacheEntity {
    /// MSAL wire names the model owns; `additionalFields` may not reuse them.
    static var modelledFieldNames: Set<String> { get }
    func encodeFields() -> FieldMap
    init(decoding fields: FieldTable) throws(FormatError)
    /// Fields sealed separately so a lookup can filter without decrypting the body (FORMAT.md §5.4).
    func summaryFields() -> FieldMap?
    /// Checks required fields and the scope syntax before anything is written.
    func validate() throws(TokenCacheError)
    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8]
    /// The home account this entity belongs to, or nil for app-wide entities (app metadata).
    var homeAccountIDForIndex: String? { get }
    var clientIDForFilter: String? { get }
}

extension StorableEntity {
    package func summaryFields() -> FieldMap? { nil }

    /// Rejects additional fields that would shadow modelled ones, and non-finite numbers.
    func validateAdditionalFields() throws(TokenCacheError) {
        for (name, value) in additionalFields {
            if Self.modelledFieldNames.contains(name) || name == "credential_type" {
                throw TokenCacheError(.invalidArgument, "\(Self.kind) additional field '\(name)' shadows a modelled field")
            }
            if name.isEmpty || name.utf8.count > FieldMap.maximumNameLength {
                throw TokenCacheError(.invalidArgument, "\(Self.kind) additional field name has an invalid length")
            }
            if !value.isFinite {
                throw TokenCacheError(.invalidArgument, "\(Self.kind) additional field '\(name)' holds a non-finite number")
            }
        }
    }

    static func requireNonEmpty(_ value: String, _ field: String) throws(TokenCacheError) {
        if value.isEmpty { throw TokenCacheError(.invalidArgument, "\(Self.kind).\(field) must not be empty") }
    }

    /// The checks every credential shares: environment, client and token present (and the account, for user
    /// credentials), unknown fields well-formed.
    static func validateCredential(homeAccountID: String?, environment: String, clientID: String, secret: Secret) throws(TokenCacheError) {
        if let homeAccountID { try requireNonEmpty(homeAccountID, "homeAccountID") }
        try requireNonEmpty(environment, "environment")
        try requireNonEmpty(clientID, "clientID")
        if secret.isEmpty { throw TokenCacheError(.invalidArgument, "\(Self.kind).secret must not be empty") }
    }
}

extension JSONValue {
    var isFinite: Bool {
        switch self {
        case .double(let value): value.isFinite
        case .array(let values): values.allSatisfy(\.isFinite)
        case .object(let values): values.values.allSatisfy(\.isFinite)
        default: true
        }
    }
}
