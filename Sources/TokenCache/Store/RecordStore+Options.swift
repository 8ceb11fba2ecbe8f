package import TokenCacheStorage
package import TokenCacheRecords

extension RecordStore {
    /// What opening a record store needs, in the store's own terms: where the records are, whether it may write, the
    /// alias groups its lookups match hosts by, and where its root key comes from. The facade translates its public
    /// ``Configuration`` into it, so that the store depends on no configuration and no key source.
    package struct Options {
        /// Where the records live and which backend keeps them.
        package var storage: any StorageLocation
        /// Names the store in the errors of its open (the configured directory, or the in-memory name).
        package var name: String
        /// Open without write access (creating is refused).
        package var readOnly: Bool
        /// The alias groups every lookup, intersect-delete and sign-out of the store matches hosts by.
        package var aliases: EnvironmentAliases
        /// Asked for the root key when the open needs it.
        package var rootKey: any RootKeyProviding
        /// The cipher a new store seals with, and the one an upgrade from format version 1 or 2 converts to; nil: the
        /// automatic choice (``RecordStore/automaticCipher(for:)``).
        package var cipher: RecordCipher?
        /// Whether a writable open finishes a data-key rotation it finds under way (an upgrade's, or one a killed
        /// `rotate-key` left): every open does, except the rotation's own, which reports and continues it itself.
        package var finishesRotation = true

        package init(
            storage: any StorageLocation, name: String, readOnly: Bool, aliases: EnvironmentAliases, rootKey: any RootKeyProviding,
            cipher: RecordCipher? = nil
        ) {
            self.cipher = cipher
            self.storage = storage
            self.name = name
            self.readOnly = readOnly
            self.aliases = aliases
            self.rootKey = rootKey
        }
    }
}
