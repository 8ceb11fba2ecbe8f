internal import CSodium

/// Purpose-separated subkeys from a master key, with BLAKE2b.
///
/// libsodium: "Given a subkey, an attacker cannot compute the master key nor any other subkeys." Distinct `(id,
/// context)` pairs give independent subkeys; the same pair always gives the same subkey.
///
/// For example:
///
/// ```swift
/// let recordKey = try KeyDerivation.deriveKey(from: termKey, id: 1, context: "tcacheV1")
/// ```
package enum KeyDerivation {
    /// Derives a `count`-byte subkey number `id` in `context` from `master`.
    ///
    /// - Parameters:
    ///   - master: A 32-byte (`crypto_kdf_KEYBYTES`) master key.
    ///   - id: The subkey number.
    ///   - context: Exactly 8 bytes of UTF-8 (`crypto_kdf_CONTEXTBYTES`), for example `"tcacheV1"`.
    ///   - count: The subkey length, 16...64 bytes (`crypto_kdf_BYTES_MIN...crypto_kdf_BYTES_MAX`).
    /// - Returns: The subkey, in guarded memory.
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/invalidParameters`` if `context` is not 8 UTF-8 bytes,
    ///   ``SodiumError/Code/invalidLength`` for a wrong master key length or `count`,
    ///   ``SodiumError/Code/outOfMemory`` if the subkey cannot be allocated.
    ///
    /// The corresponding libsodium function is `crypto_kdf_derive_from_key`.
    package static func deriveKey(
        from master: SecureKey, id: UInt64, context: String, count: Int = 32
    ) throws(SodiumError) -> SecureKey {
        try Sodium.initialize()
        let contextBytes = Array(context.utf8)
        guard contextBytes.count == Int(crypto_kdf_CONTEXTBYTES) else {
            throw SodiumError(
                .invalidParameters,
                "KDF context must be exactly \(crypto_kdf_CONTEXTBYTES) UTF-8 bytes, got \(contextBytes.count)")
        }
        guard master.count == Int(crypto_kdf_KEYBYTES) else {
            throw SodiumError(
                .invalidLength, "KDF master key must be \(crypto_kdf_KEYBYTES) bytes, got \(master.count)")
        }
        guard (Int(crypto_kdf_BYTES_MIN)...Int(crypto_kdf_BYTES_MAX)).contains(count) else {
            throw SodiumError(
                .invalidLength,
                "KDF subkey length must be \(crypto_kdf_BYTES_MIN)...\(crypto_kdf_BYTES_MAX) bytes, got \(count)")
        }
        return try SecureKey(count: count, filling: { (subkey) throws(SodiumError) in
            let result = contextBytes.withUnsafeBytes { context in
                master.withUnsafeBytes { masterBytes in
                    // SAFETY: `subkey` has `count` writable bytes, `context` exactly CONTEXTBYTES, `masterBytes`
                    // exactly KEYBYTES (checked above); all non-nil as the nonnull attribute requires.
                    crypto_kdf_derive_from_key(
                        subkey.sodiumMutableBytes, count, id, context.sodiumChars, masterBytes.sodiumBytes)
                }
            }
            guard result == 0 else {
                throw SodiumError(.invalidParameters, "crypto_kdf_derive_from_key rejected its parameters")
            }
        })
    }
}
