package import TokenCacheRecords

/// The authenticated cipher a store seals its records with (FORMAT.md §1, §6.1). Each data key names its own, so a
/// data-key rotation (``TokenStore/rotateDataKey(to:progress:)`` in TokenCacheOperations) converts a store from one to
/// the other while it stays readable.
public enum StoreCipher: String, Sendable, CaseIterable, CustomStringConvertible {
    /// AES-256-GCM, each record section under a key of its own derived from a random 192-bit seed (so that no
    /// nonce budget applies). About two and a half times cheaper per byte than XChaCha20-Poly1305, but only on a
    /// processor with AES-NI and PCLMULQDQ (x86-64; libsodium 1.0.18 has none on ARM64). A store sealed with it does
    /// not open on a machine without them (`.unsupportedEnvironment`).
    case aes256GCM = "aes-256-gcm"
    /// XChaCha20-Poly1305 with random 192-bit nonces: runs on every machine. The cipher of stores of format
    /// versions 1 and 2.
    case xchacha20Poly1305 = "xchacha20-poly1305"

    /// The name `cachetool` prints and accepts (`aes-256-gcm`, `xchacha20-poly1305`).
    public var description: String { rawValue }

    /// Whether this machine can seal and open records with it.
    public var isAvailable: Bool { recordCipher.isAvailable }

    /// The error for this cipher where the machine cannot run it (`.unsupportedEnvironment`), saying what could not be
    /// done: the one a store's open gives, for a caller that checks ``isAvailable`` before it gets that far.
    package func unavailable(_ what: String) -> TokenCacheError { RecordStore.unavailable(recordCipher, what) }

    /// AES-256-GCM where this machine runs it, XChaCha20-Poly1305 elsewhere.
    public static var preferred: StoreCipher { StoreCipher(RecordCipher.preferred) }

    package var recordCipher: RecordCipher {
        switch self {
        case .aes256GCM: .aes256GCM
        case .xchacha20Poly1305: .xchacha20Poly1305
        }
    }

    package init(_ cipher: RecordCipher) {
        switch cipher {
        case .aes256GCM: self = .aes256GCM
        case .xchacha20Poly1305: self = .xchacha20Poly1305
        }
    }
}
