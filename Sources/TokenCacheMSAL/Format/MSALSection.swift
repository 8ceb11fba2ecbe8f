internal import TokenCache
internal import TokenCacheRecords
/// Which part of an MSAL serialized cache a top-level member is.
///
/// MSAL writers spell the five section names `AccessToken`, `RefreshToken`, `IdToken`, `Account` and `AppMetadata`,
/// but nothing stops a hand-edited or tool-written cache from changing their case, so the reader matches them
/// ASCII-case-insensitively. Every other top-level member is an unknown section: MSAL .NET, Go and JS keep those
/// on a round trip, so the importer hands them on instead of dropping them.
enum MSALSection: Sendable, Hashable {
    /// One of the five entity sections.
    case entity(EntityKind)
    /// A top-level member that is not an entity section (kept as raw JSON).
    case unknown

    /// The section `name` (as written) stands for.
    init(name: String) {
        let folded = name.asciiLowercased
        self = EntityKind.allCases.first { $0.rawValue.asciiLowercased == folded }.map(Self.entity) ?? .unknown
    }

    /// The order in which the writer emits the entity sections: bytewise by name, as every other member.
    static let writtenOrder: [EntityKind] = EntityKind.allCases.sorted { $0.rawValue.utf8.lexicographicallyPrecedes($1.rawValue.utf8) }
}
