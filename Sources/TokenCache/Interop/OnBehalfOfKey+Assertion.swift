internal import TokenCacheRecords
internal import TokenCacheSodium

extension OnBehalfOfKey {
    /// The partition of the tokens obtained on behalf of `assertion` (the caller's incoming access token): its hash,
    /// as MSAL .NET computes it, base64url without padding of SHA-256 over the assertion's UTF-8 bytes. Only the hash
    /// is kept.
    public init(assertion: Secret) {
        self.init(stored: Base64URL.encode(assertion.withUnsafeBytes { SHA256.hash($0) }))!
    }
}
