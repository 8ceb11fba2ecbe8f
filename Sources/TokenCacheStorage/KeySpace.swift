/// One of the key spaces a store keeps its records in (FORMAT.md §3): the header's, and one per entity kind.
///
/// Every backend holds exactly these, so a transaction reaches a space by its position (LMDB: an array of database
/// handles) rather than by searching for a name, and a space that was not opened cannot be named at all. A backend
/// that stores the spaces side by side (a table across a network) keys rows by ``rawValue``, which is fixed: it is
/// also the index the salvage progress file records.
package enum KeySpace: Int, CaseIterable, Sendable, Hashable, Comparable {
    case meta = 0
    case accounts = 1
    case accessTokens = 2
    case refreshTokens = 3
    case idTokens = 4
    case appMetadata = 5

    /// The name FORMAT.md gives the space: LMDB's database name, and the label sealed into the associated data of
    /// every record stored in it (so a record moved to another space fails to open).
    @inlinable
    package var name: String {
        switch self {
        case .meta: "meta"
        case .accounts: "accounts"
        case .accessTokens: "access_tokens"
        case .refreshTokens: "refresh_tokens"
        case .idTokens: "id_tokens"
        case .appMetadata: "app_metadata"
        }
    }

    package static func < (lhs: KeySpace, rhs: KeySpace) -> Bool { lhs.rawValue < rhs.rawValue }
}
