/// Per-application facts (`AppMetadata` section): today only whether the client belongs to a family.
public struct AppMetadata: CacheEntity {
    /// The record kind: ``EntityKind/appMetadata``.
    public static let kind = EntityKind.appMetadata

    /// The client the metadata describes (`client_id`).
    public var clientID: String
    /// The authority host (`environment`) the metadata applies to.
    public var environment: String
    /// `"1"` when the client is a member of the (only) Microsoft family of client IDs.
    public var familyID: String?
    /// Fields this library does not model, preserved verbatim.
    public var additionalFields: [String: JSONValue]

    /// App metadata. Storing it requires a non-empty client id and environment.
    @inlinable
    public init(clientID: String, environment: String, familyID: String? = nil, additionalFields: [String: JSONValue] = [:]) {
        self.clientID = clientID
        self.environment = environment
        self.familyID = familyID
        self.additionalFields = additionalFields
    }

    /// What identifies app metadata: client and environment.
    public struct Key: Sendable, Hashable {
        /// The client id. Compared ASCII-case-insensitively.
        public var clientID: String
        /// The authority host. Compared ASCII-case-insensitively.
        public var environment: String

        /// The key of `clientID`'s metadata under `environment`.
        public init(clientID: String, environment: String) {
            self.clientID = clientID
            self.environment = environment
        }
    }

    /// This record's identity.
    public var key: Key { Key(clientID: clientID, environment: environment) }
}
