/// A raw OAuth2/OIDC token-endpoint response (RFC 6749 §5.1 + AAD extensions).
///
/// Holds the response as the server sent it; ``DerivedEntities`` turns it into cache entities. The tokens are
/// ``Secret``s. `client_info` and `scope` are kept as text: `client_info` names the account, so don't log it.
///
/// Parsing rules (``init(json:)``):
/// - the input must be at most 1 MiB and one JSON object (a leading UTF-8 BOM is skipped); duplicate member
///   names are rejected;
/// - an `error` member (other than `null`) makes it an OAuth error response, which is rejected, naming the error
///   code when it is a registered one (never the `error_description`, which may quote user input);
/// - `access_token` must be a non-empty string; `expires_in` must be present;
/// - `expires_in`, `ext_expires_in` and `refresh_in` may be JSON numbers or numeric strings (ADFS and AAD v1 send
///   strings); each must be an integer (`3600.0` counts, `3600.5` and `1e309` don't), not negative, and at most
///   ten years;
/// - the other members must be strings when present; `null` means absent, and so does an empty
///   `refresh_token`, `id_token`, `client_info`, `token_type` or `scope` (as MSAL Python treats them);
/// - unknown members (`id_token_claims`, `not_before`, `correlation_id`, …) are ignored.
///
/// Every rejection is a ``TokenCacheError`` with code `.invalidArgument` whose message names the member and never
/// contains a value from the response.
public struct TokenResponse: Sendable {
    /// `access_token`: the access token itself.
    public var accessToken: Secret
    /// `token_type`, e.g. `Bearer` or `pop`; nil (or empty) is stored as absent and read as Bearer.
    public var tokenType: String?
    /// Seconds.
    public var expiresIn: Int64
    /// `ext_expires_in`: seconds the token stays usable when the service is down; gives `extended_expires_on`.
    public var extExpiresIn: Int64?
    /// `refresh_in`: seconds after which a refresh is recommended; gives `refresh_on`.
    public var refreshIn: Int64?
    /// `refresh_token`; nil when the response has none.
    public var refreshToken: Secret?
    /// The raw JWT.
    public var idToken: Secret?
    /// Raw base64url `client_info`.
    public var clientInfo: String?
    /// Space-separated scopes as the server sent them.
    public var scope: String?
    /// `"1"` when the client is a member of the family of client IDs.
    public var foci: String?

    /// The largest input ``init(json:)`` reads: 1 MiB.
    static let maximumSize = 1 << 20
    /// The longest lifetime accepted for `expires_in`, `ext_expires_in` and `refresh_in`: ten years of 365.25 days.
    static let maximumLifetime: Int64 = 315_576_000

    /// A response from its members, as ``init(json:)`` would have parsed them.
    public init(
        accessToken: Secret, tokenType: String? = "Bearer", expiresIn: Int64, extExpiresIn: Int64? = nil,
        refreshIn: Int64? = nil, refreshToken: Secret? = nil, idToken: Secret? = nil, clientInfo: String? = nil,
        scope: String? = nil, foci: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.extExpiresIn = extExpiresIn
        self.refreshIn = refreshIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.clientInfo = clientInfo
        self.scope = scope
        self.foci = foci
    }

    /// Parses the JSON body of a token-endpoint response, as text (what an HTTP client's string body gives).
    /// - Throws: ``TokenCacheError`` `.invalidArgument` naming the offending member (see the type's rules).
    public init(json: String) throws {
        try self.init(json: json.utf8)
    }

    /// Parses the JSON body of a token-endpoint response, as bytes (`Data`, `[UInt8]`, a `ByteBuffer`'s view).
    /// - Throws: ``TokenCacheError`` `.invalidArgument` naming the offending member (see the type's rules).
    public init(json: some Collection<UInt8>) throws {
        guard json.count <= Self.maximumSize else {
            throw TokenCacheError(.invalidArgument, "token response is larger than 1 MiB")
        }
        let root: ResponseJSON
        do { root = try ResponseJSON.parse(Array(json)) } catch {
            throw TokenCacheError(.invalidArgument, "token response is not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        guard let members = root.objectValue else {
            throw TokenCacheError(.invalidArgument, "token response is not a JSON object")
        }
        let reader = MemberReader(members: members)
        try reader.rejectErrorResponse()

        guard let accessToken = try reader.stringBytes("access_token") else {
            throw TokenCacheError(.invalidArgument, "token response has no access_token")
        }
        guard !accessToken.isEmpty else { throw TokenCacheError(.invalidArgument, "token response access_token is empty") }
        guard let expiresIn = try reader.lifetime("expires_in") else {
            throw TokenCacheError(.invalidArgument, "token response has no expires_in")
        }
        self.init(
            accessToken: Secret(bytes: accessToken),
            tokenType: try reader.nonEmptyString("token_type"),
            expiresIn: expiresIn,
            extExpiresIn: try reader.lifetime("ext_expires_in"),
            refreshIn: try reader.lifetime("refresh_in"),
            refreshToken: try reader.stringBytes("refresh_token").flatMap { $0.isEmpty ? nil : Secret(bytes: $0) },
            idToken: try reader.stringBytes("id_token").flatMap { $0.isEmpty ? nil : Secret(bytes: $0) },
            clientInfo: try reader.nonEmptyString("client_info"),
            scope: try reader.nonEmptyString("scope"),
            foci: try reader.string("foci")
        )
    }

    /// The checks that hold for a parsed response and that a memberwise-built one must pass before derivation.
    func validate() throws {
        guard !accessToken.isEmpty else { throw TokenCacheError(.invalidArgument, "token response access_token is empty") }
        try Self.checkLifetime(expiresIn, "expires_in")
        if let extExpiresIn { try Self.checkLifetime(extExpiresIn, "ext_expires_in") }
        if let refreshIn { try Self.checkLifetime(refreshIn, "refresh_in") }
    }

    static func checkLifetime(_ seconds: Int64, _ name: String) throws {
        if seconds < 0 { throw TokenCacheError(.invalidArgument, "token response \(name) is negative") }
        if seconds > maximumLifetime {
            throw TokenCacheError(.invalidArgument, "token response \(name) is more than ten years")
        }
    }

    /// Typed access to the members of the response object; every error names the member, never its value.
    private struct MemberReader {
        let members: [String: ResponseJSON]

        func present(_ name: String) -> ResponseJSON? {
            guard let value = members[name], value != .null else { return nil }
            return value
        }

        func rejectErrorResponse() throws {
            guard let error = present("error") else { return }
            // Only a registered code is echoed; an unknown value could be anything (even token material), and the
            // description, URIs and other members never appear in the message.
            var code = "unrecognized, not shown"
            if let text = error.stringValue, Self.knownErrorCodes.contains(text) { code = text }
            throw TokenCacheError(
                .invalidArgument, "token response is an OAuth error response (error: \(code)), not a token response"
            )
        }

        /// RFC 6749 §4.1.2.1 and §5.2, RFC 8628 §3.5, OpenID Connect Core §3.1.2.6, RFC 8693 and RFC 9449 codes.
        static let knownErrorCodes: Set<String> = [
            "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
            "invalid_scope", "access_denied", "unsupported_response_type", "server_error", "temporarily_unavailable",
            "authorization_pending", "slow_down", "expired_token", "interaction_required", "login_required",
            "account_selection_required", "consent_required", "invalid_request_uri", "invalid_request_object",
            "request_not_supported", "request_uri_not_supported", "registration_not_supported", "invalid_target",
            "invalid_dpop_proof", "use_dpop_nonce", "invalid_resource",
        ]

        func stringBytes(_ name: String) throws -> [UInt8]? {
            guard let value = present(name) else { return nil }
            guard case .string(let bytes) = value else {
                throw TokenCacheError(.invalidArgument, "token response \(name) must be a JSON string")
            }
            return bytes
        }

        func string(_ name: String) throws -> String? {
            try stringBytes(name).map { String(decoding: $0, as: UTF8.self) }
        }

        func nonEmptyString(_ name: String) throws -> String? {
            guard let text = try string(name), !text.isEmpty else { return nil }
            return text
        }

        /// A number of seconds given as a JSON number or a numeric string.
        func lifetime(_ name: String) throws -> Int64? {
            guard let value = present(name) else { return nil }
            let seconds: Int64?
            switch value {
            case .number(let lexeme):
                if lexeme.hasPrefix("-") && lexeme.utf8.dropFirst().contains(where: { $0 != 0x30 && ResponseJSON.isDigit($0) }) {
                    // Report a negative value as such, even when it is also fractional or huge.
                    throw TokenCacheError(.invalidArgument, "token response \(name) is negative")
                }
                seconds = ResponseJSON.integer(fromLexeme: lexeme)
            case .string(let bytes):
                seconds = ResponseJSON.integer(fromNumericString: bytes)
            default:
                throw TokenCacheError(.invalidArgument, "token response \(name) must be a number or a numeric string")
            }
            guard let seconds else {
                throw TokenCacheError(.invalidArgument, "token response \(name) is not an integer number of seconds in range")
            }
            try TokenResponse.checkLifetime(seconds, name)
            return seconds
        }
    }
}
