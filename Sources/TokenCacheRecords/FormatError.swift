/// Why a stored byte string does not decode. Internal: the store maps it to ``TokenCacheError``
/// (`.corruptRecord` for one record, `.corruptStore` for the header) together with a fingerprint.
package struct FormatError: Error, Equatable, CustomStringConvertible {
    /// The failure classes of FORMAT.md §9 (and of the test vectors' `expect_text`).
    package enum Kind: Equatable {
        case unsupportedVersion
        case lengthOutOfRange
        case unknownKeyID
        case authenticationFailure
        case invalidContent
        /// Sealed with a cipher this machine cannot run (AES-256-GCM without AES-NI): not damage.
        case unavailableCipher
    }

    package let kind: Kind
    package let message: String

    package init(_ message: String, kind: Kind = .invalidContent) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
