internal import TokenCacheRecords

/// How identifiers compare: client ids, home account ids, hosts, realms and token types are equal when they differ
/// in ASCII case only, as the store's keys fold them (FORMAT.md §4.2, `ascii_lower`). Unicode case is not folded: two
/// identifiers that only a Unicode case mapping makes equal name different records. Layers above the store (the
/// client's single-flight key) fold through this, so they never treat as one what the store treats as two.
package enum IdentifierCase {
    /// `identifier` with ASCII letters lower-cased and every other byte unchanged.
    package static func folded(_ identifier: String) -> String { identifier.asciiLowercased }
}
