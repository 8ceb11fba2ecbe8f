internal import CSodium

/// SHA-256, unkeyed: for the digests other software defines with it (an MSAL extended cache key), never for naming
/// this store's records (those use keyed BLAKE2b, ``GenericHash``).
///
/// The corresponding libsodium function is `crypto_hash_sha256`.
package enum SHA256 {
    /// The digest length: 32 bytes.
    package static let digestCount = Int(crypto_hash_sha256_BYTES)

    /// The SHA-256 digest of `input`.
    package static func hash(_ input: some Collection<UInt8>) -> [UInt8] {
        Sodium.initializeOrTrap()
        var digest = [UInt8](repeating: 0, count: digestCount)
        let bytes = Array(input)
        // SAFETY: `digest` has digestCount writable bytes; `bytes` is valid for its count during the call.
        _ = digest.withUnsafeMutableBytes { output in
            bytes.withUnsafeBytes { input in
                crypto_hash_sha256(output.sodiumMutableBytes, input.sodiumBytes, input.sodiumLength)
            }
        }
        return digest
    }
}
