package import TokenCacheSodium
package import TokenCacheRecords

/// Where the root key of a store being opened or created comes from, as the record store asks for it.
///
/// The store cannot be handed its key up front: which key an existing store needs is in its header (a passphrase's
/// salt and Argon2id costs, or none), and the header is read inside the open, after the checks that say whether there
/// is a store at all. So the store asks, at the point where it needs the key, and whoever configured the store (the
/// facade, from its ``Configuration``) answers from its key source. The store knows nothing of key files,
/// passphrases or the environment, and the errors name them from the side that does.
package protocol RootKeyProviding {
    /// The root key of a store about to be created, with what its header records of how it was made. Asked before
    /// anything is created, so that a key that cannot be had leaves nothing behind.
    func newRootKey() throws -> NewRootKey

    /// Throws when the existing store at `location` (it has a header) cannot be given a key at all, before its header is
    /// decoded: a key file that is not there is named as such, whatever the header holds.
    func checkAvailable(forStoreAt location: String) throws

    /// The root key of the existing store whose header is `header`.
    func rootKey(for header: StoreHeader) throws -> SecureKey
}

/// A new store's root key and the header parameters that say how to derive it again (FORMAT.md §6.2).
package struct NewRootKey {
    package var root: SecureKey
    package var kind: RootKind
    /// The passphrase's salt; zeros for a raw key.
    package var salt: [UInt8]
    /// The passphrase's Argon2id costs; nil for a raw key.
    package var cost: (opsLimit: UInt64, memLimit: UInt64)?

    package init(root: SecureKey, kind: RootKind, salt: [UInt8], cost: (opsLimit: UInt64, memLimit: UInt64)?) {
        self.root = root
        self.kind = kind
        self.salt = salt
        self.cost = cost
    }
}
