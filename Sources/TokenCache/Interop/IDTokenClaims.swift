internal import TokenCacheRecords

/// The claims of an OpenID Connect ID token that the cache derives accounts from.
///
/// **The signature is not verified, on purpose.** The ID token reaches the cache straight from the token
/// endpoint, over TLS, in the response the auth client just redeemed; the client (MSAL) is the party that
/// validates it. Caching makes no trust decision from these claims: they only label the account
/// (`home_account_id` for ADFS, realm for `/common`, username, names). Verifying here would need the issuer's
/// keys, which a cache does not have, and would add nothing the TLS channel did not already give.
///
/// Parsing: the JWT must have exactly three dot-separated segments (JWS compact form; the third, the signature,
/// may be empty for unsigned tokens); the header and payload must be base64url (padding optional); the payload
/// must be a JSON object. A claim of the wrong JSON type, or an empty string, counts as absent. Errors are
/// ``TokenCacheError`` `.invalidArgument` starting with "id_token" and never quote the token.
struct IDTokenClaims: Sendable, Hashable {
    var sub: String?
    var oid: String?
    var tid: String?
    var preferredUsername: String?
    var upn: String?
    var email: String?
    var name: String?
    var givenName: String?
    var familyName: String?
    var middleName: String?

    init(jwt: Secret) throws {
        let claims = try Self.payload(of: jwt)
        func claim(_ name: String) -> String? {
            guard let value = claims[name]?.stringValue, !value.isEmpty else { return nil }
            return value
        }
        sub = claim("sub")
        oid = claim("oid")
        tid = claim("tid")
        preferredUsername = claim("preferred_username")
        upn = claim("upn")
        email = claim("email")
        name = claim("name")
        givenName = claim("given_name")
        familyName = claim("family_name")
        middleName = claim("middle_name")
    }

    /// The payload of a JWT in JWS compact form, unverified (see above), as its JSON members.
    static func payload(of jwt: Secret) throws(TokenCacheError) -> [String: ResponseJSON] {
        let segments = jwt.withUnsafeBytes { raw in
            raw.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
        }
        guard segments.count == 3 else {
            throw TokenCacheError(.invalidArgument, "id_token is not a JWT of three dot-separated segments")
        }
        guard !segments[0].isEmpty, Base64URL.decode(segments[0]) != nil else {
            throw TokenCacheError(.invalidArgument, "id_token header is not base64url")
        }
        guard segments[2].isEmpty || Base64URL.decode(segments[2]) != nil else {
            throw TokenCacheError(.invalidArgument, "id_token signature is not base64url")
        }
        guard !segments[1].isEmpty, let payload = Base64URL.decode(segments[1]) else {
            throw TokenCacheError(.invalidArgument, "id_token payload is not base64url")
        }
        guard let claims = (try? ResponseJSON.parse(payload))?.objectValue else {
            throw TokenCacheError(.invalidArgument, "id_token payload is not a JSON object")
        }
        return claims
    }

    /// The `iat` (issued at) and `exp` claims of a JWT, in Unix seconds, each nil when absent, not an integral
    /// number, or when `jwt` is not a JWT with a JSON object payload. The MSAL cache records no write time for an
    /// ID token; its issue time is the one there is (``ImportMerge`` orders ID tokens by it).
    static func issueTimes(of jwt: Secret) -> (issuedAt: Int64?, expiresAt: Int64?) {
        guard let claims = try? payload(of: jwt) else { return (nil, nil) }
        func time(_ name: String) -> Int64? {
            guard case .number(let lexeme)? = claims[name] else { return nil }
            return ResponseJSON.integer(fromLexeme: lexeme)
        }
        return (time("iat"), time("exp"))
    }

    /// `preferred_username`, else `upn`, else `email` (MSAL's account username).
    var username: String? { preferredUsername ?? upn ?? email }

    /// `oid`, else `sub` (MSAL's `local_account_id`).
    var localAccountID: String? { oid ?? sub }
}

extension IDToken {
    /// The claims of this ID token (`name`, `preferred_username`, `oid`, `tid`, and any other), decoded from its
    /// payload without verifying the signature: the client that redeemed the token over TLS is the party that
    /// validates it, and a cache makes no trust decision from claims. Nil when ``secret`` is not a JWT whose payload
    /// is a JSON object. Numbers that are integers become ``JSONValue/integer(_:)``, others ``JSONValue/double(_:)``.
    public var claims: [String: JSONValue]? {
        guard let members = try? IDTokenClaims.payload(of: secret) else { return nil }
        return members.mapValues(JSONValue.init)
    }
}

extension JSONValue {
    /// A value read by the library's strict JSON reader.
    init(_ json: ResponseJSON) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let lexeme):
            if let integer = ResponseJSON.integer(fromLexeme: lexeme), !lexeme.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                self = .integer(integer)
            } else {
                self = .double(Double(lexeme) ?? .nan)
            }
        case .string(let bytes): self = .string(String(decoding: bytes, as: UTF8.self))
        case .array(let values): self = .array(values.map(JSONValue.init))
        case .object(let members): self = .object(members.mapValues(JSONValue.init))
        }
    }
}

extension ImportMerge {
    /// An ID token's stamp for an import's merge: its JWT's issue time (`iat`) as the write time, and `exp`. ID tokens
    /// record no write time of their own.
    package static func stamp(of token: IDToken) -> Stamp {
        let (issuedAt, expiresAt) = IDTokenClaims.issueTimes(of: token.secret)
        return Stamp(writtenAt: issuedAt, expiresOn: expiresAt)
    }

    /// ``idTokenWins(existing:incoming:stamp:)`` with the stamps read from the tokens' JWTs.
    package static func idTokenWins(existing: IDToken, incoming: IDToken) -> Bool {
        idTokenWins(existing: existing, incoming: incoming, stamp: stamp(of:))
    }
}
