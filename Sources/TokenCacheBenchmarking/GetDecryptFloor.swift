internal import TokenCacheMSAL
public import TokenCache
internal import TokenCacheRecords
internal import TokenCacheStorage

extension TokenStore {
    /// The physical floor of a lookup, measured on this store's own records: `samples` timings (nanoseconds) of one
    /// read transaction that gets a stored access-token record by its key and authenticates and decrypts its body
    /// (with the store's own cipher, so the floor uses the AEAD the lookups pay for), and nothing else: no query planning, no
    /// bucket walk, no field decoding, no entity.
    ///
    /// Why an SPI entry point in the library and not the loop in `cachetool`: the floor needs the storage backend,
    /// the records' keys and the keyring, none of which is (or should become) public API. Exposing those, even as
    /// SPI, would hand out the pieces of the format; this function hands out only durations. It runs the loop itself,
    /// so the keys and plaintext never leave the library (the plaintext is decrypted into a temporary buffer that is
    /// wiped). The records are drawn uniformly from the whole access-token database with a fixed `seed` (a
    /// reservoir sample, one pass), and each is read once untimed first, as the lookups are warmed.
    ///
    /// It is not used by any lookup or write: it adds no code to the hot paths it is compared with.
    @_spi(Benchmarking)
    public func measureGetDecryptFloor(samples: Int, seed: UInt64) throws -> [UInt64] {
        precondition(samples > 0)
        let store = self.store
        let database = KeySpace.accessTokens
        var keys: [[UInt8]] = []
        keys.reserveCapacity(samples)
        var seen: UInt64 = 0
        try store.read { reader in
            try reader.transaction.forEach(in: database, prefix: []) { key, _ in key.withUnsafeBytes { key in
                seen += 1
                if keys.count < samples {
                    keys.append(Array(key))
                } else {
                    let slot = SyntheticPopulation.mix(seen &+ seed) % seen
                    if slot < UInt64(samples) { keys[Int(slot)] = Array(key) }
                }
                return true
            } }
        }
        guard !keys.isEmpty else { throw TokenCacheError(.invalidArgument, "the store holds no access token to measure") }
        let keyring = store.keyring
        func getAndDecrypt(_ key: [UInt8]) throws -> Int {
            let opened = try store.backend.read { transaction in
                try transaction.withValue(in: database, forKey: key) { value in try value.withUnsafeBytes { value in
                    try key.withUnsafeBytes { keyBytes in
                        try RecordEnvelope.withOpened(
                            .body, of: value, storeID: keyring.storeID, database: database.name, key: keyBytes, keys: keyring.recordKey
                        ) { plaintext in plaintext.count }
                    }
                } }
            }
            guard let count = opened ?? nil, count > 0 else { throw TokenCacheError(.corruptRecord, "a sampled record did not open") }
            return count
        }
        do {
            var sink = 0
            for key in keys { sink &+= try getAndDecrypt(key) }
            var timings: [UInt64] = []
            timings.reserveCapacity(samples)
            for i in 0..<samples {
                let key = keys[i % keys.count]
                let start = MonotonicClock.nanoseconds()
                sink &+= try getAndDecrypt(key)
                timings.append(MonotonicClock.nanoseconds() - start)
            }
            precondition(sink != 0)
            return timings
        } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
    }
}
