package import TokenCacheSodium

/// The unwrapped keys of one open store (FORMAT.md §6.3):
///
/// ```
/// KEK             = KDF(root, id 1, "tcKEKv01")
/// data key k      = Open(KEK, wrapped k, AD = wrap AD of k)
/// record key k    = KDF(data key k, id 1, "tcacheV1")
/// index key       = KDF(data key with the smallest id, id 2, "tcacheV1")
/// fingerprint key = KDF(data key with the smallest id, id 3, "tcacheV1")
/// ```
///
/// The index and fingerprint keys are fixed for the life of the store, so a lookup never tries several
/// terms; new records are sealed with the data key of the largest id.
package final class Keyring: Sendable {
    package let header: StoreHeader
    package let activeKeyID: UInt32
    private let dataKeys: [UInt32: SecureKey]
    private let recordKeys: [UInt32: RecordKey]
    package let index: BlindIndex
    private let fingerprintKey: SecureKey

    package var storeID: [UInt8] { header.storeID }

    private init(header: StoreHeader, dataKeys: [UInt32: SecureKey]) throws(KeyringError) {
        self.header = header
        self.dataKeys = dataKeys
        let ids = dataKeys.keys.sorted()
        activeKeyID = ids.last!
        (recordKeys, index, fingerprintKey) = try KeyringError.mappingSodium {
            let ciphers = Dictionary(uniqueKeysWithValues: header.wrappedKeys.map { ($0.keyID, $0.cipher) })
            var recordKeys: [UInt32: RecordKey] = [:]
            for (id, key) in dataKeys {
                guard let cipher = ciphers[id] else { preconditionFailure("data key \(id) is not in the header") }
                recordKeys[id] = RecordKey(
                    cipher: cipher,
                    key: try KeyDerivation.deriveKey(from: key, id: 1, context: FormatConstants.subkeyContext)
                )
            }
            let first = dataKeys[ids.first!]!
            let index = try KeyDerivation.deriveKey(from: first, id: 2, context: FormatConstants.subkeyContext)
            let fingerprint = try KeyDerivation.deriveKey(from: first, id: 3, context: FormatConstants.subkeyContext)
            return (recordKeys, try BlindIndex(key: index), fingerprint)
        }
    }

    package func recordKey(_ id: UInt32) -> RecordKey? { recordKeys[id] }
    package var activeRecordKey: RecordKey { recordKeys[activeKeyID]! }

    /// The cipher new records are sealed with: the active data key's.
    package var activeCipher: RecordCipher { activeRecordKey.cipher }

    /// A non-secret, stable name for a record: the first 8 bytes of `BLAKE2b-128(fingerprint key, u32be(len db) ‖ db ‖ key)`, in hex.
    /// It identifies a record in errors and in `cachetool` output without revealing its key bytes; only a
    /// holder of the store's keys can link it to an account.
    package func fingerprint(database: String, key: [UInt8]) -> String {
        var input: [UInt8] = []
        withUnsafeBytes(of: UInt32(database.utf8.count).bigEndian) { input += $0 }
        input += database.utf8
        input += key
        // BLAKE2b outputs at least 16 bytes in libsodium; the fingerprint is the first 8 of a 16-byte digest.
        let digest = try! GenericHash.hash(input, key: fingerprintKey, outputCount: FormatConstants.indexDigestCount)
        return Hex.encode(digest.prefix(FormatConstants.fingerprintCount))
    }

    package static func keyEncryptionKey(root: SecureKey) throws(KeyringError) -> SecureKey {
        try KeyringError.mappingSodium {
            try KeyDerivation.deriveKey(from: root, id: 1, context: FormatConstants.kekContext)
        }
    }

    /// Unwraps every data key of `header` with `root`. Any authentication failure means the root key is
    /// not this store's (or the header was altered): `.wrongKey`, and nothing else happens.
    package static func unlock(header: StoreHeader, root: SecureKey) throws(KeyringError) -> Keyring {
        let kek = try keyEncryptionKey(root: root)
        var dataKeys: [UInt32: SecureKey] = [:]
        for wrapped in header.wrappedKeys {
            let ad = header.wrapAssociatedData(keyID: wrapped.keyID)
            do {
                dataKeys[wrapped.keyID] = try SecureKey(count: FormatConstants.dataKeyCount) { output in
                    try wrapped.sealedKey.withUnsafeBytes { sealed in
                        try wrapped.nonce.withUnsafeBytes { nonce in
                            try ad.withUnsafeBytes { ad in
                                try XChaCha20Poly1305.open(sealed, associatedData: ad, nonce: nonce, key: kek, into: output)
                            }
                        }
                    }
                }
            } catch {
                throw KeyringError(.wrongKey, "the key does not open this store (data key \(wrapped.keyID) failed to authenticate)")
            }
        }
        return try Keyring(header: header, dataKeys: dataKeys)
    }

    /// A fresh header with one random data key (id 1), sealed under `root`. `cost` is the Argon2id work a passphrase
    /// root was stretched with (kept in the header). `fixed` supplies the random parts (store id, data key, nonce) for
    /// test vectors.
    package static func create(
        rootKind: RootKind, root: SecureKey, salt: [UInt8], cost: (opsLimit: UInt64, memLimit: UInt64)?, cipher: RecordCipher, now: Int64,
        fixed: (storeID: [UInt8], dataKey: SecureKey, nonce: [UInt8])? = nil
    ) throws(KeyringError) -> Keyring {
        var header = StoreHeader(storeID: fixed?.storeID ?? Random.bytes(FormatConstants.storeIDCount), rootKind: rootKind)
        if rootKind == .passphrase, let cost {
            header.opsLimit = cost.opsLimit
            header.memLimit = cost.memLimit
            header.salt = salt
        }
        let dataKey: SecureKey
        if let fixed {
            dataKey = fixed.dataKey
        } else {
            dataKey = try KeyringError.mappingSodium { try SecureKey(randomCount: FormatConstants.dataKeyCount) }
        }
        let nonce = fixed?.nonce ?? Random.bytes(XChaCha20Poly1305.nonceByteCount)
        // The key list (ids and dates) is part of every wrap's associated data: lay it out first.
        header.wrappedKeys = [WrappedKey(keyID: 1, createdAt: now, cipher: cipher, nonce: nonce, sealedKey: [])]
        header.wrappedKeys = [
            try wrap(dataKey, keyID: 1, createdAt: now, cipher: cipher, nonce: nonce, header: header, kek: try keyEncryptionKey(root: root))
        ]
        return try Keyring(header: header, dataKeys: [1: dataKey])
    }

    /// `header` with every data key re-sealed under `root` and `header`'s fixed prefix (versions, root kind,
    /// Argon2id parameters). Records are untouched: this is how a key file or passphrase is changed.
    package func rewrapped(as header: StoreHeader, root: SecureKey) throws(KeyringError) -> StoreHeader {
        try Self.wrapping(dataKeys, as: header, root: root)
    }

    /// The data key ids of this keyring, ascending: the first roots the blind index and fingerprints, the last is
    /// the active one.
    package var keyIDs: [UInt32] { header.wrappedKeys.map(\.keyID) }

    /// The header with a new random data key added as the active one (id one above the largest), sealing records with
    /// `cipher`, every key re-sealed under `root` (the key list is in each wrap's associated data, §6.3), and the
    /// keyring that opens it. `header` replaces this keyring's header first (an upgrade's new versions), when given.
    package func addingDataKey(
        createdAt now: Int64, cipher: RecordCipher, root: SecureKey, header replacement: StoreHeader? = nil
    ) throws(KeyringError) -> Keyring {
        guard header.wrappedKeys.count < FormatConstants.maximumDataKeys, let last = keyIDs.last, last < UInt32.max else {
            throw KeyringError(.unknownDataKey, "the store already holds \(FormatConstants.maximumDataKeys) data keys; finish or retire some first")
        }
        let key = try KeyringError.mappingSodium { try SecureKey(randomCount: FormatConstants.dataKeyCount) }
        var keys = dataKeys
        keys[last + 1] = key
        var target = replacement ?? header
        target.wrappedKeys.append(WrappedKey(keyID: last + 1, createdAt: now, cipher: cipher, nonce: [], sealedKey: []))
        return try Keyring(header: try Self.wrapping(keys, as: target, root: root), dataKeys: keys)
    }

    /// The header without the data keys `retired`, the others re-sealed under `root`, and the keyring that opens it.
    /// The first key (the blind index's root) and the active one are never retired. With `relabelingFirst`, the first
    /// key, when it is not the active one, names the active key's cipher from then on: a rotation's last step does so
    /// (FORMAT.md §6.5), since no record is sealed under the first key any more, so that a store converted to
    /// XChaCha20-Poly1305 names no other cipher and opens where AES-256-GCM does not run.
    package func retiring(_ retired: Set<UInt32>, root: SecureKey, relabelingFirst: Bool = false) throws(KeyringError) -> Keyring {
        let kept = Set(keyIDs.filter { !retired.contains($0) || $0 == keyIDs.first || $0 == activeKeyID })
        var target = header
        target.wrappedKeys = header.wrappedKeys.filter { kept.contains($0.keyID) }
        if relabelingFirst, target.namesCiphers, target.wrappedKeys.count > 1 { target.wrappedKeys[0].cipher = activeCipher }
        let keys = dataKeys.filter { kept.contains($0.key) }
        return try Keyring(header: try Self.wrapping(keys, as: target, root: root), dataKeys: keys)
    }

    /// `header` (whose key list is final) with each of its keys sealed from `keys` under `root`.
    private static func wrapping(_ keys: [UInt32: SecureKey], as header: StoreHeader, root: SecureKey) throws(KeyringError) -> StoreHeader {
        let kek = try keyEncryptionKey(root: root)
        var result = header
        result.wrappedKeys = []
        for listed in header.wrappedKeys {
            guard let key = keys[listed.keyID] else { throw KeyringError(.unknownDataKey, "data key \(listed.keyID) is not in this keyring") }
            result.wrappedKeys.append(
                try wrap(
                    key, keyID: listed.keyID, createdAt: listed.createdAt, cipher: listed.cipher,
                    nonce: Random.bytes(XChaCha20Poly1305.nonceByteCount), header: header, kek: kek
                )
            )
        }
        return result
    }

    /// Seals one data key under the KEK with the wrap associated data of `header` (FORMAT.md §6.3).
    private static func wrap(
        _ dataKey: SecureKey, keyID: UInt32, createdAt: Int64, cipher: RecordCipher, nonce: [UInt8], header: StoreHeader, kek: SecureKey
    ) throws(KeyringError) -> WrappedKey {
        let ad = header.wrapAssociatedData(keyID: keyID)
        var sealed = [UInt8](repeating: 0, count: FormatConstants.dataKeyCount + XChaCha20Poly1305.tagByteCount)
        try KeyringError.mappingSodium {
            try dataKey.withUnsafeBytes { key in
                try nonce.withUnsafeBytes { nonce in
                    try ad.withUnsafeBytes { ad in
                        try sealed.withUnsafeMutableBytes { output in
                            try XChaCha20Poly1305.seal(key, associatedData: ad, nonce: nonce, key: kek, into: output)
                        }
                    }
                }
            }
        }
        return WrappedKey(keyID: keyID, createdAt: createdAt, cipher: cipher, nonce: nonce, sealedKey: sealed)
    }
}

/// Why a keyring could not be built or changed. The store maps it to its public error (`wrongKey` for a key that
/// does not open the store).
package struct KeyringError: Error, Equatable, CustomStringConvertible {
    package enum Code: Equatable, Sendable {
        /// A wrapped data key did not authenticate under the root key: another store's key, or an altered header.
        case wrongKey
        /// The system refused memory for key material.
        case outOfMemory
        /// libsodium refused an operation whose sizes the keyring computed itself: a bug, not bad input.
        case cryptographicFailure
        /// A header names a data key this keyring does not hold.
        case unknownDataKey
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    /// Runs a libsodium-wrapper call, mapping its failure.
    static func mappingSodium<T>(_ body: () throws -> T) throws(KeyringError) -> T {
        do {
            return try body()
        } catch let error as SodiumError where error.code == .outOfMemory {
            throw KeyringError(.outOfMemory, "out of memory for key material (\(error.message))")
        } catch {
            throw KeyringError(.cryptographicFailure, "a cryptographic operation on key material failed")
        }
    }
}
