internal import TokenCacheRecords

/// MSAL's extended cache key (`ext_cache_key`): what keeps apart access tokens obtained with extra request
/// parameters, such as a federated managed identity path (`fmi_path`) or forwarded client claims (`client_claims`).
///
/// A token stored with such a key answers only a query with the same key, and a query with a key sees only tokens
/// stored with it (Docs/Semantics.md, "Extended cache keys"). The key is derived from the request's body parameters
/// as MSAL Python 1.39 and MSAL Go derive it, so that a cache written by either reads the same here:
///
/// 1. keep the parameters whose value is not empty and whose name is not a standard OAuth parameter
///    (``standardParameters``);
/// 2. sort them by name (bytewise) and serialise each as `<utf8 length of name>:<name><utf8 length of value>:<value>`,
///    which no two different parameter sets share;
/// 3. hash with SHA-256, encode as base64url without padding and lower-case the text.
///
/// For example:
///
/// ```swift
/// ExtendedCacheKey(parameters: ["fmi_path": "SomeFmiPath/FmiCredentialPath"])?.value
/// // the 43-character key MSAL Python stores for that path
/// ExtendedCacheKey(parameters: ["grant_type": "client_credentials"])  // nil: only standard parameters
/// ```
///
/// The parameters' values never leave this type: errors and descriptions name neither them nor their digest's input.
/// The derivation from parameters (``init(parameters:)``) lives with the token requests it serves, beside the hash it
/// needs; this type is the pure rule.
public struct ExtendedCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The key as MSAL stores it: lower-case base64url of a SHA-256 digest (43 characters) for the keys this type
    /// derives; a key read from another writer's cache is kept as it came, lower-cased.
    public let value: String

    /// The request parameters that never take part in the key: the standard body parameters of the OAuth grants and
    /// client authentication, and those MSAL keys tokens by separately (`token_type`, `key_id`, `req_cnf`). MSAL Python
    /// 1.39's list.
    public static let standardParameters: Set<String> = [
        "client_id", "grant_type", "scope", "claims", "username", "password", "refresh_token", "code", "redirect_uri",
        "code_verifier", "device_code", "assertion", "requested_token_use", "client_assertion", "client_assertion_type",
        "client_secret", "token_type", "req_cnf", "key_id", "user_federated_identity_credential", "user_id", "client_info",
    ]

    /// The longest key accepted from a stored cache or a caller, in bytes.
    public static let maximumLength = 256

    /// A key already in its canonical form (a digest the parameters gave).
    package init(canonical value: String) { self.value = value }

    /// A key given as text (a stored cache's `ext_cache_key`, or a caller who computed it), in its canonical form:
    /// ASCII-lower-cased.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` when the text is empty, longer than ``maximumLength`` bytes, or
    ///   holds a byte outside printable ASCII (`0x21`–`0x7E`).
    public init(_ text: String) throws(TokenCacheError) {
        guard !text.isEmpty else { throw TokenCacheError(.invalidArgument, "the extended cache key is empty") }
        guard text.utf8.count <= Self.maximumLength else {
            throw TokenCacheError(.invalidArgument, "the extended cache key is longer than \(Self.maximumLength) bytes")
        }
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw TokenCacheError(.invalidArgument, "the extended cache key holds a byte outside printable ASCII")
        }
        value = text.asciiLowercased
    }

    public var description: String { value }
}
