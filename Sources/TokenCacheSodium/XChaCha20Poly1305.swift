internal import CSodium

/// XChaCha20-Poly1305-IETF authenticated encryption with associated data, combined mode (ciphertext ‖ 16-byte tag).
///
/// The 192-bit nonce makes random nonces safe: generate a fresh one with ``Random/fill(_:)`` for every encryption and
/// never reuse or derive one. Bind each ciphertext to its slot through the associated data.
///
/// libsodium: "applications must enforce a limit on the maximum size of a ciphertext to decrypt"; callers cap sizes
/// before calling ``open(_:associatedData:nonce:key:into:)``.
///
/// Inputs may be empty: an empty plaintext seals to a bare 16-byte tag.
///
/// For example:
///
/// ```swift
/// var nonce = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceByteCount)
/// nonce.withUnsafeMutableBytes { Random.fill($0) }
/// var sealed = [UInt8](repeating: 0, count: plaintext.count + XChaCha20Poly1305.tagByteCount)
/// try sealed.withUnsafeMutableBytes { output in
///     try XChaCha20Poly1305.seal(plaintext, associatedData: ad, nonce: nonceBytes, key: key, into: output)
/// }
/// ```
package enum XChaCha20Poly1305 {
    /// `crypto_aead_xchacha20poly1305_ietf_KEYBYTES` (32).
    package static let keyByteCount = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    /// `crypto_aead_xchacha20poly1305_ietf_NPUBBYTES` (24).
    package static let nonceByteCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    /// `crypto_aead_xchacha20poly1305_ietf_ABYTES` (16).
    package static let tagByteCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Encrypts and authenticates `plaintext` and authenticates `ad`, writing ciphertext ‖ tag into `output`.
    ///
    /// - Parameters:
    ///   - plaintext: The message; may be empty.
    ///   - ad: Associated data, authenticated but not encrypted; may be empty.
    ///   - nonce: Exactly ``nonceByteCount`` bytes, fresh and random for every call.
    ///   - key: A ``keyByteCount``-byte key.
    ///   - output: Receives the ciphertext and tag. Its count must be `plaintext.count + tagByteCount` (precondition).
    ///     It may be the same memory as `plaintext` (libsodium supports in-place encryption) but must not otherwise
    ///     overlap it.
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/invalidLength`` for a wrong nonce or key length or an oversized
    ///   message, ``SodiumError/Code/initializationFailed`` if libsodium cannot be initialized.
    ///
    /// The corresponding libsodium function is `crypto_aead_xchacha20poly1305_ietf_encrypt`.
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer,
        associatedData ad: UnsafeRawBufferPointer,
        nonce: UnsafeRawBufferPointer,
        key: SecureKey,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        precondition(
            output.count == plaintext.count + tagByteCount,
            "XChaCha20Poly1305.seal: output must be plaintext.count + \(tagByteCount) bytes"
        )
        try Sodium.initialize()
        try checkLengths(nonce: nonce, key: key)
        // size_t is imported as Int; MESSAGEBYTES_MAX is SIZE_MAX - ABYTES, so read it back as unsigned.
        guard UInt(plaintext.count) <= UInt(bitPattern: crypto_aead_xchacha20poly1305_ietf_messagebytes_max()) else {
            throw SodiumError(.invalidLength, "plaintext of \(plaintext.count) bytes exceeds the AEAD message limit")
        }
        var written: UInt64 = 0
        let result = key.withUnsafeBytes { keyBytes in
            // SAFETY: every pointer is valid for the length passed with it (sodiumBytes substitutes a sentinel for
            // empty buffers, so the nonnull `c`, `npub` and `k` are never nil); `nsec` "is not used by this
            // construction and should always be NULL"; `output` has room for mlen + ABYTES bytes (precondition).
            crypto_aead_xchacha20poly1305_ietf_encrypt(
                output.sodiumMutableBytes, &written,
                plaintext.sodiumBytes, plaintext.sodiumLength,
                ad.sodiumBytes, ad.sodiumLength,
                nil,
                nonce.sodiumBytes,
                keyBytes.sodiumBytes
            )
        }
        guard result == 0, written == UInt64(output.count) else {
            Memory.zero(output)
            throw SodiumError(.invalidLength, "crypto_aead_xchacha20poly1305_ietf_encrypt rejected the message")
        }
    }

    /// Verifies and decrypts `ciphertext` (ciphertext ‖ tag) with `ad`, writing the plaintext into `output`.
    ///
    /// Decryption and verification happen together: on failure no plaintext is released. libsodium: the function
    /// returns -1 "if the verification fails"; this method then zeroes `output` and throws
    /// ``SodiumError/Code/authenticationFailed``, and the caller must discard `output` unread. The error does not say
    /// whether the key, nonce, associated data or ciphertext was wrong.
    ///
    /// - Parameters:
    ///   - ciphertext: The sealed message; at least ``tagByteCount`` bytes.
    ///   - ad: The associated data used to seal; may be empty.
    ///   - nonce: The ``nonceByteCount``-byte nonce used to seal.
    ///   - key: The ``keyByteCount``-byte key used to seal.
    ///   - output: Receives the plaintext. Its count must be `ciphertext.count - tagByteCount` (precondition).
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/authenticationFailed`` on forgery or any mismatch,
    ///   ``SodiumError/Code/invalidLength`` if `ciphertext` is shorter than the tag or the nonce or key length is wrong.
    ///   `output` is all zeros after any error.
    ///
    /// The corresponding libsodium function is `crypto_aead_xchacha20poly1305_ietf_decrypt`.
    package static func open(
        _ ciphertext: UnsafeRawBufferPointer,
        associatedData ad: UnsafeRawBufferPointer,
        nonce: UnsafeRawBufferPointer,
        key: SecureKey,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        guard ciphertext.count >= tagByteCount else {
            Memory.zero(output)
            throw SodiumError(
                .invalidLength, "ciphertext of \(ciphertext.count) bytes is shorter than the \(tagByteCount)-byte tag")
        }
        precondition(
            output.count == ciphertext.count - tagByteCount,
            "XChaCha20Poly1305.open: output must be ciphertext.count - \(tagByteCount) bytes"
        )
        do {
            try Sodium.initialize()
            try checkLengths(nonce: nonce, key: key)
        } catch {
            Memory.zero(output)
            throw error
        }
        var written: UInt64 = 0
        let result = key.withUnsafeBytes { keyBytes in
            // SAFETY: every pointer is valid for the length passed with it (the nonnull `c`, `npub` and `k` are never
            // nil); `nsec` "is not used by this construction and should always be NULL"; `output` has room for
            // clen - ABYTES bytes (precondition).
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                output.sodiumMutableBytes, &written,
                nil,
                ciphertext.sodiumBytes, ciphertext.sodiumLength,
                ad.sodiumBytes, ad.sodiumLength,
                nonce.sodiumBytes,
                keyBytes.sodiumBytes
            )
        }
        guard result == 0, written == UInt64(output.count) else {
            Memory.zero(output)
            throw SodiumError(.authenticationFailed, "ciphertext did not authenticate")
        }
    }

    private static func checkLengths(nonce: UnsafeRawBufferPointer, key: SecureKey) throws(SodiumError) {
        guard nonce.count == nonceByteCount else {
            throw SodiumError(.invalidLength, "nonce must be \(nonceByteCount) bytes, got \(nonce.count)")
        }
        guard key.count == keyByteCount else {
            throw SodiumError(.invalidLength, "key must be \(keyByteCount) bytes, got \(key.count)")
        }
    }
}
