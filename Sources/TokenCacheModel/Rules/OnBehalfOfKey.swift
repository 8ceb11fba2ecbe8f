internal import TokenCacheRecords

/// The partition of on-behalf-of tokens: what MSAL .NET stores as `user_assertion_hash` and keys its OBO cache by.
///
/// A web API that calls another API for its caller holds only the caller's incoming token (the user assertion). The
/// tokens it obtains with it (grant `urn:ietf:params:oauth:grant-type:jwt-bearer`) belong to that caller alone, so
/// they are stored and found by this key, never by a home account id, and one caller's tokens never answer another's
/// request (Docs/Semantics.md, "On-behalf-of partitions"). Two kinds, as in MSAL .NET:
///
/// - the hash of the assertion (``init(assertion:)``): base64url, without padding, of the SHA-256 of the assertion's
///   UTF-8 bytes, MSAL .NET's `UserAssertion` hash. The assertion itself is never stored;
/// - a key the application chooses for a long-running process (``init(longRunningProcessKey:)``), which keeps
///   working after the incoming token expired, by the partition's refresh token.
///
/// Compared exactly: a base64url hash is case-sensitive.
public struct OnBehalfOfKey: Sendable, Hashable, CustomStringConvertible {
    /// The key as stored in `user_assertion_hash`.
    public let value: String

    /// The longest long-running-process key accepted, in bytes.
    public static let maximumLength = 1024

    /// A key the application chose for a long-running on-behalf-of process (MSAL .NET's
    /// `longRunningProcessSessionKey`), stored as it is.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` when it is empty, longer than ``maximumLength`` bytes, or holds
    ///   a control character.
    public init(longRunningProcessKey key: String) throws(TokenCacheError) {
        guard !key.isEmpty else { throw TokenCacheError(.invalidArgument, "the on-behalf-of key is empty") }
        guard key.utf8.count <= Self.maximumLength else {
            throw TokenCacheError(.invalidArgument, "the on-behalf-of key is longer than \(Self.maximumLength) bytes")
        }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F..<0xA0).contains($0.value) }) else {
            throw TokenCacheError(.invalidArgument, "the on-behalf-of key holds a control character")
        }
        value = key
    }

    /// A stored `user_assertion_hash`, as it is (an import, a record); nil for an absent or empty one.
    package init?(stored value: String?) {
        guard let value, !value.isEmpty else { return nil }
        self.value = value
    }

    /// Shows the key: a hash, or the application's own key. Never the assertion.
    public var description: String { value }
}
