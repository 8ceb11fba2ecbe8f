internal import CSodium

/// AES-256-GCM authenticated encryption with associated data, combined mode (ciphertext ‖ 16-byte tag), where the
/// processor has the instructions libsodium's implementation needs (AES-NI and PCLMULQDQ on x86-64; libsodium 1.0.18
/// has none on ARM64).
///
/// GCM's 96-bit nonce is too short to draw at random for every message under one key: past about 2^32 messages a
/// repeat becomes likely, and a repeat reveals the authentication key. So this type never seals twice under one key:
/// each seal draws a 24-byte random *seed* and derives a fresh AES key from the long-term key and the seed
/// (``sealKey(from:seed:into:)``), under which it encrypts exactly one message with the all-zero nonce. Two seals share
/// a key only if two 192-bit seeds collide. The seed is stored where XChaCha20-Poly1305's nonce would be, so a section
/// has the same shape under either algorithm.
///
/// ```
/// K_seal = BLAKE2b-256(key = key, salt = seed[0..<16], personal = seed[16..<24] ‖ "tcAESgcm", message = empty)
/// sealed = AES-256-GCM(K_seal, nonce = 0^12, plaintext, ad)
/// ```
///
/// The derivation is libsodium's `crypto_kdf` construction (BLAKE2b keyed by the master, the subkey's id in the salt
/// and a context in the personalization) with a 192-bit id in place of its 64-bit one: one BLAKE2b compression.
package enum AES256GCM {
    /// `crypto_aead_aes256gcm_KEYBYTES` (32).
    package static let keyByteCount = Int(crypto_aead_aes256gcm_KEYBYTES)
    /// The random seed each seal draws and stores in front of its ciphertext (24 bytes).
    package static let seedByteCount = 24
    /// `crypto_aead_aes256gcm_ABYTES` (16).
    package static let tagByteCount = Int(crypto_aead_aes256gcm_ABYTES)
    /// The personalization's fixed half: separates these seal keys from every other BLAKE2b output of the same key.
    package static let sealKeyContext: [UInt8] = Array("tcAESgcm".utf8)

    /// Whether this processor runs libsodium's AES-256-GCM (`crypto_aead_aes256gcm_is_available`), as the store's
    /// checks ask it: a test may pretend it does not, within one task (``availabilityOverride``).
    package static var isAvailable: Bool {
        if let forced = availabilityOverride { return forced }
        return processorHasIt
    }

    /// What ``isAvailable`` answers in the task that sets it (nil: the processor's answer): how a test sees a machine
    /// without AES-NI, without changing what tests running beside it see.
    @TaskLocal package static var availabilityOverride: Bool? = nil

    private static var processorHasIt: Bool {
        guard (try? Sodium.initialize()) != nil else { return false }
        return crypto_aead_aes256gcm_is_available() == 1
    }

    /// GCM's nonce: 12 bytes, all zero under every one-message key.
    private static let nonceByteCount = Int(crypto_aead_aes256gcm_NPUBBYTES)

    /// Writes the one-message key for `seed` into `output` (32 bytes), derived from `key`.
    package static func sealKey(from key: SecureKey, seed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(SodiumError) {
        try Sodium.initialize()
        try deriveSealKey(from: key, seed: seed, into: output)
    }

    /// ``sealKey(from:seed:into:)`` once libsodium is initialized (seal and open have checked it already).
    private static func deriveSealKey(from key: SecureKey, seed: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(SodiumError) {
        precondition(output.count == keyByteCount && key.count == keyByteCount, "AES256GCM.sealKey: 32-byte key and output")
        guard seed.count == seedByteCount else {
            throw SodiumError(.invalidLength, "seal seed must be \(seedByteCount) bytes, got \(seed.count)")
        }
        let result = withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { personal in
            personal.copyMemory(from: UnsafeRawBufferPointer(rebasing: seed[16..<24]))
            sealKeyContext.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: personal[8..<16]).copyMemory(from: $0) }
            return key.withUnsafeBytes { keyBytes in
                // SAFETY: `output` has 32 writable bytes; no message (NULL, 0); the key is 32 bytes (within
                // KEYBYTES_MIN...MAX); salt and personal are exactly 16 bytes each, as the function reads.
                crypto_generichash_blake2b_salt_personal(
                    output.sodiumMutableBytes, output.count, nil, 0, keyBytes.sodiumBytes, keyBytes.count,
                    seed.sodiumBytes, UnsafeRawBufferPointer(personal).sodiumBytes
                )
            }
        }
        guard result == 0 else { throw SodiumError(.invalidParameters, "crypto_generichash_blake2b_salt_personal rejected its parameters") }
    }

    /// Encrypts and authenticates `plaintext` and authenticates `ad` under the key derived from `key` and `seed`,
    /// writing ciphertext ‖ tag into `output` (`plaintext.count + tagByteCount` bytes, precondition). `seed` must be
    /// fresh random bytes for every call (``Random/fill(_:)``).
    ///
    /// The corresponding libsodium function is `crypto_aead_aes256gcm_encrypt`.
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData ad: UnsafeRawBufferPointer, seed: UnsafeRawBufferPointer, key: SecureKey,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        precondition(output.count == plaintext.count + tagByteCount, "AES256GCM.seal: output must be plaintext.count + \(tagByteCount) bytes")
        try checkAvailable()
        var written: UInt64 = 0
        let result = try withSealKey(key, seed: seed) { sealKey, nonce in
            // SAFETY: every pointer is valid for the length passed with it; `nsec` is unused and NULL; `output` has
            // room for mlen + ABYTES bytes (precondition); the nonce is NPUBBYTES (12) bytes, the key 32.
            crypto_aead_aes256gcm_encrypt(
                output.sodiumMutableBytes, &written, plaintext.sodiumBytes, plaintext.sodiumLength, ad.sodiumBytes, ad.sodiumLength,
                nil, nonce.sodiumBytes, sealKey.sodiumBytes
            )
        }
        guard result == 0, written == UInt64(output.count) else {
            Memory.zero(output)
            throw SodiumError(.invalidLength, "crypto_aead_aes256gcm_encrypt rejected the message")
        }
    }

    /// Verifies and decrypts `ciphertext` (ciphertext ‖ tag) with `ad` under the key derived from `key` and `seed`,
    /// writing the plaintext into `output` (`ciphertext.count - tagByteCount` bytes, precondition). On any failure
    /// `output` is all zeros and the error is ``SodiumError/Code/authenticationFailed`` (or `invalidLength` for a
    /// ciphertext shorter than the tag).
    ///
    /// The corresponding libsodium function is `crypto_aead_aes256gcm_decrypt`.
    package static func open(
        _ ciphertext: UnsafeRawBufferPointer, associatedData ad: UnsafeRawBufferPointer, seed: UnsafeRawBufferPointer, key: SecureKey,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        guard ciphertext.count >= tagByteCount else {
            Memory.zero(output)
            throw SodiumError(.invalidLength, "ciphertext of \(ciphertext.count) bytes is shorter than the \(tagByteCount)-byte tag")
        }
        precondition(output.count == ciphertext.count - tagByteCount, "AES256GCM.open: output must be ciphertext.count - \(tagByteCount) bytes")
        var written: UInt64 = 0
        let result: Int32
        do {
            try checkAvailable()
            result = try withSealKey(key, seed: seed) { sealKey, nonce in
                // SAFETY: as in `seal`; `output` has room for clen - ABYTES bytes (precondition).
                crypto_aead_aes256gcm_decrypt(
                    output.sodiumMutableBytes, &written, nil, ciphertext.sodiumBytes, ciphertext.sodiumLength, ad.sodiumBytes,
                    ad.sodiumLength, nonce.sodiumBytes, sealKey.sodiumBytes
                )
            }
        } catch {
            Memory.zero(output)
            throw error
        }
        guard result == 0, written == UInt64(output.count) else {
            Memory.zero(output)
            throw SodiumError(.authenticationFailed, "ciphertext did not authenticate")
        }
    }

    private static func checkAvailable() throws(SodiumError) {
        try Sodium.initialize()
        guard crypto_aead_aes256gcm_is_available() == 1 else {
            throw SodiumError(.unavailable, "AES-256-GCM needs a processor with AES-NI and PCLMULQDQ, which this one lacks")
        }
    }

    /// Lends `body` the one-message key for `seed` and the all-zero nonce, in one temporary buffer wiped when `body`
    /// returns. Only after ``checkAvailable()``, which initialized libsodium.
    private static func withSealKey<R>(
        _ key: SecureKey, seed: UnsafeRawBufferPointer, _ body: (_ sealKey: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer) -> R
    ) throws(SodiumError) -> R {
        try withUnsafeTemporaryAllocation(byteCount: keyByteCount + nonceByteCount, alignment: 16) { buffer throws(SodiumError) -> R in
            defer { Memory.zero(buffer) }
            let sealKey = UnsafeMutableRawBufferPointer(rebasing: buffer[..<keyByteCount])
            let nonce = UnsafeMutableRawBufferPointer(rebasing: buffer[keyByteCount...])
            nonce.initializeMemory(as: UInt8.self, repeating: 0)
            try deriveSealKey(from: key, seed: seed, into: sealKey)
            return body(UnsafeRawBufferPointer(sealKey), UnsafeRawBufferPointer(nonce))
        }
    }
}
