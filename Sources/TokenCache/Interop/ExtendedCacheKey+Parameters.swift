internal import TokenCacheRecords
internal import TokenCacheSodium

extension ExtendedCacheKey {
    /// The key of a request with these body parameters, derived as MSAL Python and MSAL Go derive it (see
    /// ``ExtendedCacheKey``); nil when none of them takes part (every one is standard or empty), which is a request
    /// without an extended key.
    public init?(parameters: [String: String]) {
        let kept = parameters.filter { name, value in !value.isEmpty && !Self.standardParameters.contains(name) }
        guard !kept.isEmpty else { return nil }
        var serialised: [UInt8] = []
        for name in kept.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let value = kept[name]!
            serialised += Array("\(name.utf8.count):".utf8) + Array(name.utf8)
            serialised += Array("\(value.utf8.count):".utf8) + Array(value.utf8)
        }
        self.init(canonical: Base64URL.encode(SHA256.hash(serialised)).asciiLowercased)
    }
}
