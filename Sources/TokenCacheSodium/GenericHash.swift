internal import CSodium

/// BLAKE2b, keyed or unkeyed.
///
/// Keyed, it is a MAC / PRF suitable for blind indexes and fingerprints; unkeyed, a plain hash (which lets anyone
/// holding an input confirm it, so never use it to name records by secret content).
///
/// For example:
///
/// ```swift
/// let fingerprint = try GenericHash.hash(Array(token.utf8), key: fingerprintKey, outputCount: 16)
/// ```
package enum GenericHash {
    /// Hashes `input` to `outputCount` bytes, keyed with `key` when it is not nil.
    ///
    /// - Parameters:
    ///   - input: The bytes to hash; may be empty.
    ///   - key: nil for unkeyed hashing, else a key of 16...64 bytes
    ///     (`crypto_generichash_KEYBYTES_MIN...crypto_generichash_KEYBYTES_MAX`).
    ///   - outputCount: 16...64 bytes (`crypto_generichash_BYTES_MIN...crypto_generichash_BYTES_MAX`).
    /// - Returns: The digest.
    /// - Throws: A ``SodiumError`` with code ``SodiumError/Code/invalidLength`` for a key or output length out of range.
    ///
    /// The corresponding libsodium function is `crypto_generichash`.
    package static func hash(
        _ input: UnsafeRawBufferPointer, key: SecureKey?, outputCount: Int
    ) throws(SodiumError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: outputCount)
        let result = digest.withUnsafeMutableBytes { output in
            Result { () throws(SodiumError) in try hash(input, key: key, into: output) }
        }
        try result.get()
        return digest
    }

    /// Hashes `input` into `output`, whose count is the digest length, keyed with `key` when it is not nil: for
    /// callers that assemble a digest into a larger buffer (a storage key) without an intermediate array.
    ///
    /// - Throws: as ``hash(_:key:outputCount:)`` (an output of `output.count` bytes).
    package static func hash(
        _ input: UnsafeRawBufferPointer, key: SecureKey?, into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        try Sodium.initialize()
        let outputCount = output.count
        let outputRange = Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)
        guard outputRange.contains(outputCount) else {
            throw SodiumError(
                .invalidLength,
                "BLAKE2b output must be \(outputRange.lowerBound)...\(outputRange.upperBound) bytes, got \(outputCount)")
        }
        let keyRange = Int(crypto_generichash_KEYBYTES_MIN)...Int(crypto_generichash_KEYBYTES_MAX)
        if let key, !keyRange.contains(key.count) {
            throw SodiumError(
                .invalidLength,
                "BLAKE2b key must be \(keyRange.lowerBound)...\(keyRange.upperBound) bytes, got \(key.count)")
        }
        // SAFETY: `output` has outputCount writable bytes (nonnull); input and key are valid for their lengths;
        // an unkeyed hash passes NULL with keylen 0, which crypto_generichash documents.
        let result: Int32
        if let key {
            result = key.withUnsafeBytes { keyBytes in
                crypto_generichash(
                    output.sodiumMutableBytes, outputCount, input.sodiumBytes, input.sodiumLength,
                    keyBytes.sodiumBytes, keyBytes.count)
            }
        } else {
            result = crypto_generichash(output.sodiumMutableBytes, outputCount, input.sodiumBytes, input.sodiumLength, nil, 0)
        }
        guard result == 0 else {
            throw SodiumError(.invalidLength, "crypto_generichash rejected its parameters")
        }
    }

    /// Hashes `input` to `outputCount` bytes, keyed with `key` when it is not nil.
    ///
    /// Convenience over the `UnsafeRawBufferPointer` overload.
    package static func hash(_ input: [UInt8], key: SecureKey?, outputCount: Int) throws(SodiumError) -> [UInt8] {
        // SAFETY: `bytes` is used only during the call; the digest is a fresh array.
        let result: Result<[UInt8], SodiumError> = input.withUnsafeBytes { bytes in
            Result { () throws(SodiumError) in try hash(bytes, key: key, outputCount: outputCount) }
        }
        return try result.get()
    }
}
