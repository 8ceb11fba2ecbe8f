/// An error reported by the libsodium wrapper.
///
/// The error carries a ``Code`` and a human-readable `message`. The message names the operation and, where it helps,
/// the sizes involved. It never contains key, plaintext or ciphertext bytes, so it is safe to log.
///
/// Decryption failure is a single opaque code, ``Code/authenticationFailed``: libsodium does not say why a ciphertext
/// failed to authenticate (wrong key, wrong nonce, wrong associated data or tampering), and neither does this type.
///
/// For example:
///
/// ```swift
/// do {
///     try XChaCha20Poly1305.open(ciphertext, associatedData: ad, nonce: nonce, key: key, into: output)
/// } catch {
///     if error.code == .authenticationFailed { /* discard `output` unread */ }
/// }
/// ```
package struct SodiumError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    ///
    /// Lengths of buffers, keys and outputs outside what libsodium accepts are ``invalidLength``; other numeric or
    /// textual parameters outside libsodium's range (a KDF context that is not 8 bytes, Argon2 limits) are
    /// ``invalidParameters``.
    package enum Code: Hashable, Sendable {
        /// `sodium_init()` returned -1: the library cannot be used in this process.
        case initializationFailed
        /// An AEAD ciphertext did not authenticate. Deliberately says nothing more.
        case authenticationFailed
        /// libsodium could not allocate memory (`sodium_malloc`, Argon2's working memory).
        case outOfMemory
        /// A key, nonce, salt, input or requested output has a length libsodium does not accept.
        case invalidLength
        /// A parameter other than a length is outside libsodium's accepted range.
        case invalidParameters
        /// Text is not strictly valid in the requested encoding.
        case invalidEncoding
        /// The operation needs processor instructions this machine lacks (AES-256-GCM without AES-NI).
        case unavailable
    }

    /// What went wrong.
    package let code: Code
    /// A description of the failure. Never contains key, plaintext or ciphertext bytes.
    package let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `"<code>: <message>"`, for example `"authenticationFailed: ciphertext did not authenticate"`.
    package var description: String {
        "\(code): \(message)"
    }
}
