package import TokenCacheSodium

/// The AEAD that seals the records of one data key (FORMAT.md §1, §6.1): named per data key in the header, so that a
/// rotation can move a store from one to the other while records of both are in it.
///
/// AES-256-GCM is about two and a half times cheaper per byte on a processor with AES-NI and PCLMULQDQ, and is what a
/// store created on such a machine uses; XChaCha20-Poly1305 runs everywhere (libsodium has no AES-GCM on ARM64) and
/// is what stores of format versions 1 and 2 use.
package enum RecordCipher: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case xchacha20Poly1305 = 0x01
    case aes256GCM = 0x02

    /// The name `cachetool` prints and accepts.
    package var description: String {
        switch self {
        case .xchacha20Poly1305: "xchacha20-poly1305"
        case .aes256GCM: "aes-256-gcm"
        }
    }

    /// Whether this machine can seal and open with it.
    package var isAvailable: Bool {
        switch self {
        case .xchacha20Poly1305: true
        case .aes256GCM: AES256GCM.isAvailable
        }
    }

    /// The cheapest cipher this machine runs: what a new store, or a store upgraded to format version 3, seals with
    /// unless told otherwise.
    package static var preferred: RecordCipher { AES256GCM.isAvailable ? .aes256GCM : .xchacha20Poly1305 }
}

/// A data key's record key with the cipher it seals under: what opens, and what seals, the records that name that key.
package struct RecordKey: Sendable {
    package let cipher: RecordCipher
    package let key: SecureKey

    package init(cipher: RecordCipher, key: SecureKey) {
        self.cipher = cipher
        self.key = key
    }

    /// Seals `plaintext` with `ad` under the 24-byte `nonce` (XChaCha20-Poly1305's nonce, or AES-256-GCM's seal seed)
    /// into `output` (ciphertext ‖ tag).
    @inline(__always)
    package func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData ad: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        switch cipher {
        case .xchacha20Poly1305: try XChaCha20Poly1305.seal(plaintext, associatedData: ad, nonce: nonce, key: key, into: output)
        case .aes256GCM: try AES256GCM.seal(plaintext, associatedData: ad, seed: nonce, key: key, into: output)
        }
    }

    /// Authenticates and decrypts what ``seal(_:associatedData:nonce:into:)`` wrote.
    @inline(__always)
    package func open(
        _ ciphertext: UnsafeRawBufferPointer, associatedData ad: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(SodiumError) {
        switch cipher {
        case .xchacha20Poly1305: try XChaCha20Poly1305.open(ciphertext, associatedData: ad, nonce: nonce, key: key, into: output)
        case .aes256GCM: try AES256GCM.open(ciphertext, associatedData: ad, seed: nonce, key: key, into: output)
        }
    }
}
