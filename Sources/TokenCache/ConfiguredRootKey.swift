internal import TokenCacheSodium
internal import TokenCacheRecords

/// The root key a ``Configuration`` names, as the record store asks for it (``RootKeyProviding``): derived through
/// the key layer from the configured ``KeySource`` and Argon2id costs, with the errors a first run meets named in the
/// configuration's terms (its environment variables, `cachetool init`).
struct ConfiguredRootKey: RootKeyProviding {
    let directory: String
    let keySource: KeySource
    let passphraseCost: PassphraseCost
    let maximumPassphraseCost: PassphraseCost

    init(_ configuration: Configuration) {
        directory = configuration.directory
        keySource = configuration.keySource
        passphraseCost = configuration.passphraseCost
        maximumPassphraseCost = configuration.maximumPassphraseCost
    }

    /// A key file that is not there yet is the user's to create (with the store, by `cachetool init`), never made
    /// silently here.
    func newRootKey() throws -> NewRootKey {
        if let path = missingKeyFile {
            throw TokenCacheError(
                .keyUnavailable,
                "cannot create the store at \(directory): its key file \(path) does not exist, and nothing was "
                    + "created. `cachetool init` creates the key file and the store together (a library creates the key with "
                    + "KeyFile.create(at:)); or set \(Configuration.Variable.base64Key) or \(Configuration.Variable.passphrase)"
            )
        }
        let generated = try RootKey.generate(from: keySource, cost: passphraseCost, maximumCost: maximumPassphraseCost)
        return NewRootKey(
            root: generated.root, kind: RootKey.kind(of: keySource), salt: generated.salt,
            cost: generated.cost.map { ($0.opsLimit, $0.memLimit) }
        )
    }

    /// A store's key cannot be made again: the one way on is the file it was created with.
    func checkAvailable(forStoreAt location: String) throws {
        guard let path = missingKeyFile else { return }
        throw TokenCacheError(
            .keyUnavailable,
            "the store at \(location) exists, but its key file \(path) does not. Restore that file from your backup "
                + "(or point \(Configuration.Variable.keyFile) at it, or set \(Configuration.Variable.base64Key) to the key, "
                + "or \(Configuration.Variable.passphrase) if the store was created with one); a new key cannot open this "
                + "store, so `cachetool init` makes none"
        )
    }

    func rootKey(for header: StoreHeader) throws -> SecureKey {
        try RootKey.derive(from: keySource, header: header, maximumCost: maximumPassphraseCost)
    }

    /// The path of the key file the source names, when it is one that does not exist.
    private var missingKeyFile: String? {
        guard case .keyFile(let path) = keySource, !FileSystem.exists(path) else { return nil }
        return path
    }
}
