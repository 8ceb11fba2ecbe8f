internal import CSodium

/// SHA-256, unkeyed: for the digests other software defines with it (an MSAL extended cache key), never for naming
/// this store's records (those use keyed BLAKE2b, ``GenericHash``).
///
/// The corresponding libsodium function is `crypto_hash_sha256`.
package enum SHA256 {
    /// The digest length: 32 bytes.
    package static let digestCount = Int(crypto_hash_sha256_BYTES)

    /// The SHA-256 digest of `input`, read in place: a secret hashed (an assertion) leaves no copy behind.
    package static func hash(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        Sodium.initializeOrTrap()
        var digest = [UInt8](repeating: 0, count: digestCount)
        // SAFETY: `digest` has digestCount writable bytes; `input` is valid for its count during the call.
        _ = digest.withUnsafeMutableBytes { output in crypto_hash_sha256(output.sodiumMutableBytes, input.sodiumBytes, input.sodiumLength) }
        return digest
    }

    /// The SHA-256 digest of `input`.
    package static func hash(_ input: [UInt8]) -> [UInt8] {
        input.withUnsafeBytes { hash($0) }
    }
}
