/// A stored record's keyed, non-secret fingerprint (16 hex digits), as a value a ``StoredEntity`` carries: the record's
/// key space and storage key, and what derives the fingerprint from them.
///
/// The fingerprint is derived when asked, not when the record is read: it is a keyed hash (about one twentieth of a
/// lookup's instructions), and most reads never name their record. What derives it is the store's key material,
/// which this module does not know; it sees it only as ``RecordFingerprinting``.
@usableFromInline
package struct RecordFingerprint: Sendable {
    /// The key space the record was read from (its kind's database).
    package let space: String
    /// The record's storage key: where it is stored (for a lone access token, its bucket's prefix).
    package let key: [UInt8]
    private let deriver: any RecordFingerprinting

    package init(space: String, key: [UInt8], deriver: any RecordFingerprinting) {
        self.space = space
        self.key = key
        self.deriver = deriver
    }

    /// The fingerprint, derived now.
    package var value: String { deriver.fingerprint(database: space, key: key) }
}

/// What derives a record's fingerprint from its key space and storage key: the store's keyring. A class, so that a
/// stored entity holds one reference to it and no copy of any key.
package protocol RecordFingerprinting: AnyObject, Sendable {
    func fingerprint(database: String, key: [UInt8]) -> String
}
