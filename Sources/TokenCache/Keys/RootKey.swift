package import TokenCacheSodium
package import TokenCacheRecords

/// Turns a ``KeySource`` into the 32-byte root key of a store.
package enum RootKey {
    static let byteCount = 32

    /// The root kind a new store created from `source` will have.
    package static func kind(of source: KeySource) -> RootKind {
        if case .passphrase = source { return .passphrase }
        return .rawKey
    }

    /// Derives the root key for an existing store, whose header says how.
    package static func derive(from source: KeySource, header: StoreHeader, maximumCost: PassphraseCost) throws(TokenCacheError) -> SecureKey {
        switch (source, header.rootKind) {
        case (.passphrase(let passphrase, let origin), .passphrase):
            let cost = PassphraseCost(opsLimit: header.opsLimit, memLimit: header.memLimit)
            try cost.check(maximum: maximumCost)
            return try stretch(passphrase, origin: origin, salt: header.salt, cost: cost)
        case (.passphrase(_, let origin), .rawKey):
            throw TokenCacheError(
                .wrongKey, "this store is protected by a key file or raw key, but a passphrase was given (\(origin))"
            )
        case (_, .passphrase):
            throw TokenCacheError(
                .wrongKey, "this store is protected by a passphrase; set TOKEN_CACHE_PASSPHRASE (got \(source))"
            )
        case (_, .rawKey):
            return try rawKey(from: source)
        }
    }

    /// The root key and header parameters for a new store.
    /// A cost above `maximumCost` is refused here too, so a store is never created that the same configuration
    /// could not open.
    package static func generate(from source: KeySource, cost: PassphraseCost, maximumCost: PassphraseCost) throws(TokenCacheError)
        -> (root: SecureKey, salt: [UInt8], cost: PassphraseCost?)
    {
        if case .passphrase(let passphrase, let origin) = source {
            try cost.check(maximum: maximumCost)
            let salt = Random.bytes(PasswordHash.saltByteCount)
            return (try stretch(passphrase, origin: origin, salt: salt, cost: cost), salt, cost)
        }
        return (try rawKey(from: source), [UInt8](repeating: 0, count: 16), nil)
    }

    static func rawKey(from source: KeySource) throws(TokenCacheError) -> SecureKey {
        switch source {
        case .keyFile(let path):
            return try KeyFile.read(at: path)
        case .base64Key(let encoded, let origin):
            let invalid = TokenCacheError(
                .keyUnavailable, "\(origin) is not the standard base64 encoding of exactly \(byteCount) bytes"
            )
            let key = try SodiumCall.run {
                try encoded.withUnsafeBytes { text in
                    try Base64.decodeKey(UnsafeRawBufferPointer(rebasing: text.trimmingASCIIWhitespace()), variant: .original)
                }
            } orElse: { invalid }
            guard key.count == byteCount else { throw invalid }
            return key
        case .passphrase:
            preconditionFailure("passphrases are stretched, not read")
        }
    }

    private static func stretch(_ passphrase: Secret, origin: String, salt: [UInt8], cost: PassphraseCost) throws(TokenCacheError)
        -> SecureKey
    {
        if passphrase.isEmpty { throw TokenCacheError(.keyUnavailable, "the passphrase from \(origin) is empty") }
        return try SodiumCall.run {
            try passphrase.withUnsafeBytes { bytes in
                try PasswordHash.deriveKey(
                    count: byteCount, passphrase: bytes, salt: salt, opsLimit: cost.opsLimit, memLimit: cost.memLimit
                )
            }
        } orElse: { TokenCacheError(.keyUnavailable, "Argon2id failed for the passphrase from \(origin)") }
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes without leading and trailing ASCII whitespace (a trailing newline from `echo` is common).
    func trimmingASCIIWhitespace() -> Slice<UnsafeRawBufferPointer> {
        var start = startIndex, end = endIndex
        while start < end && ASCII.isWhitespace(self[start]) { start += 1 }
        while end > start && ASCII.isWhitespace(self[end - 1]) { end -= 1 }
        return self[start..<end]
    }
}
