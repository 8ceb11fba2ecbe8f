internal import CSodium

/// Argon2id (version 1.3) key derivation from a passphrase.
///
/// The algorithm is named explicitly, `crypto_pwhash_ALG_ARGON2ID13`, never `crypto_pwhash_ALG_DEFAULT`, which
/// libsodium says "can change from one version of libsodium to another".
///
/// Policy (floors such as ``interactive`` and ceilings such as ``sensitive``) is the caller's: check stored limits
/// before calling, so that a tampered header can neither weaken the KDF nor exhaust memory. This type only enforces
/// libsodium's own bounds.
///
/// For example:
///
/// ```swift
/// let kek = try PasswordHash.deriveKey(count: 32, passphrase: passphrase, salt: salt,
///                                      opsLimit: PasswordHash.interactive.opsLimit,
///                                      memLimit: PasswordHash.interactive.memLimit)
/// ```
package enum PasswordHash {
    /// `crypto_pwhash_SALTBYTES` (16).
    package static let saltByteCount = Int(crypto_pwhash_saltbytes())

    /// `crypto_pwhash_OPSLIMIT_INTERACTIVE` / `crypto_pwhash_MEMLIMIT_INTERACTIVE` (2, 64 MiB).
    package static let interactive: (opsLimit: UInt64, memLimit: UInt64) = (
        UInt64(crypto_pwhash_opslimit_interactive()), UInt64(crypto_pwhash_memlimit_interactive())
    )
    /// `crypto_pwhash_OPSLIMIT_MODERATE` / `crypto_pwhash_MEMLIMIT_MODERATE` (3, 256 MiB).
    package static let moderate: (opsLimit: UInt64, memLimit: UInt64) = (
        UInt64(crypto_pwhash_opslimit_moderate()), UInt64(crypto_pwhash_memlimit_moderate())
    )
    /// `crypto_pwhash_OPSLIMIT_SENSITIVE` / `crypto_pwhash_MEMLIMIT_SENSITIVE` (4, 1 GiB).
    package static let sensitive: (opsLimit: UInt64, memLimit: UInt64) = (
        UInt64(crypto_pwhash_opslimit_sensitive()), UInt64(crypto_pwhash_memlimit_sensitive())
    )

    /// Derives `count` bytes from `passphrase` and `salt` with Argon2id into guarded memory.
    ///
    /// Takes time and memory in proportion to `opsLimit` and `memLimit` (INTERACTIVE: about 75 ms and 64 MiB): run it
    /// once per process, not per record.
    ///
    /// - Parameters:
    ///   - count: The key length, `crypto_pwhash_BYTES_MIN` (16) or more.
    ///   - passphrase: The passphrase bytes; may be empty.
    ///   - salt: Exactly ``saltByteCount`` random bytes, stored next to the derived key's ciphertext.
    ///   - opsLimit: Argon2 passes, `crypto_pwhash_OPSLIMIT_MIN...crypto_pwhash_OPSLIMIT_MAX`.
    ///   - memLimit: Memory in bytes, `crypto_pwhash_MEMLIMIT_MIN...crypto_pwhash_MEMLIMIT_MAX`.
    /// - Returns: The derived key.
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/invalidLength`` for a wrong `count`, salt or passphrase length,
    ///   ``SodiumError/Code/invalidParameters`` for limits outside libsodium's range (checked before any work),
    ///   ``SodiumError/Code/outOfMemory`` when `crypto_pwhash` returns -1 (it cannot allocate `memLimit` bytes).
    ///
    /// The corresponding libsodium function is `crypto_pwhash`.
    package static func deriveKey(
        count: Int, passphrase: UnsafeRawBufferPointer, salt: [UInt8], opsLimit: UInt64, memLimit: UInt64
    ) throws(SodiumError) -> SecureKey {
        try Sodium.initialize()
        guard count >= crypto_pwhash_bytes_min(), count <= crypto_pwhash_bytes_max() else {
            throw SodiumError(
                .invalidLength,
                "Argon2id output must be \(crypto_pwhash_bytes_min())...\(crypto_pwhash_bytes_max()) bytes, got \(count)")
        }
        guard salt.count == saltByteCount else {
            throw SodiumError(.invalidLength, "Argon2id salt must be \(saltByteCount) bytes, got \(salt.count)")
        }
        guard passphrase.count <= crypto_pwhash_passwd_max() else {
            throw SodiumError(.invalidLength, "passphrase exceeds \(crypto_pwhash_passwd_max()) bytes")
        }
        let opsRange = UInt64(crypto_pwhash_opslimit_min())...UInt64(crypto_pwhash_opslimit_max())
        guard opsRange.contains(opsLimit) else {
            throw SodiumError(
                .invalidParameters,
                "Argon2id opsLimit must be \(opsRange.lowerBound)...\(opsRange.upperBound), got \(opsLimit)")
        }
        let memRange = UInt64(crypto_pwhash_memlimit_min())...UInt64(crypto_pwhash_memlimit_max())
        guard memRange.contains(memLimit), let memoryLimit = Int(exactly: memLimit) else {
            throw SodiumError(
                .invalidParameters,
                "Argon2id memLimit must be \(memRange.lowerBound)...\(memRange.upperBound) bytes, got \(memLimit)")
        }
        return try SecureKey(count: count, filling: { (output) throws(SodiumError) in
            let result = salt.withUnsafeBytes { saltBytes in
                // SAFETY: all arguments are nonnull and valid for their lengths (sentinel for an empty passphrase);
                // the salt is exactly SALTBYTES and the limits are within libsodium's bounds (checked above).
                crypto_pwhash(
                    output.sodiumMutableBytes, UInt64(count),
                    passphrase.sodiumChars, passphrase.sodiumLength,
                    saltBytes.sodiumBytes,
                    opsLimit, memoryLimit,
                    crypto_pwhash_ALG_ARGON2ID13
                )
            }
            guard result == 0 else {
                // Parameters were validated above, so -1 means Argon2 could not allocate its memory.
                throw SodiumError(.outOfMemory, "crypto_pwhash could not allocate \(memLimit) bytes")
            }
        })
    }
}
