internal import TokenCacheMSAL
public import TokenCache
internal import TokenCacheRecords
internal import TokenCacheSodium
internal import TokenCacheStorage

extension TokenStore {
    /// The physical floor of a lookup, measured on this store's own records: `samples` timings (nanoseconds) of one
    /// read transaction that gets a stored access-token record by its key and authenticates and decrypts its body,
    /// and nothing else: no query planning, no bucket walk, no field decoding, no entity.
    ///
    /// With `cipher` nil, the stored record itself is opened, so the floor uses the AEAD the lookups pay for. With a
    /// cipher (the store's own or the other), each sampled record is first re-sealed in memory under that cipher (a
    /// throwaway key, the record's own summary, body and associated data; untimed); each timed transaction then gets
    /// the stored record as before, reads one byte of each of its cache lines (so that its pages and lines are paid for
    /// as a decryption would pay them) and opens the re-sealed copy. Both ciphers are measured this same way, so their
    /// floors in one run differ in the cipher alone, whichever cipher the store was created with; nil when this
    /// machine cannot run `cipher`.
    ///
    /// Why an SPI entry point in the library and not the loop in `cachetool`: the floor needs the storage backend,
    /// the records' keys and the keyring, none of which is (or should become) public API. Exposing those, even as
    /// SPI, would hand out the pieces of the format; this function hands out only durations. It runs the loop itself,
    /// so the keys and plaintext never leave the library (plaintext is decrypted into temporary buffers that are
    /// wiped). The records are drawn uniformly from the whole access-token database with a fixed `seed` (a
    /// reservoir sample, one pass), and each is read once untimed first, as the lookups are warmed.
    ///
    /// It is not used by any lookup or write: it adds no code to the hot paths it is compared with.
    @_spi(Benchmarking)
    public func measureGetDecryptFloor(samples: Int, seed: UInt64, cipher: StoreCipher? = nil) throws -> [UInt64]? {
        precondition(samples > 0)
        let store = self.store
        let database = KeySpace.accessTokens
        let keyring = store.keyring
        if let cipher, !cipher.isAvailable { return nil }
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
        let resealed = try cipher.map { try Self.resealed(keys, of: store, under: $0.recordCipher) }
        func getAndDecrypt(_ index: Int) throws -> Int {
            let key = keys[index]
            let opened = try store.backend.read { transaction in
                try transaction.withValue(in: database, forKey: key) { value in try value.withUnsafeBytes { value in
                    try key.withUnsafeBytes { keyBytes in
                        guard let resealed else {
                            return try RecordEnvelope.withOpened(
                                .body, of: value, storeID: keyring.storeID, database: database.name, key: keyBytes, keys: keyring.recordKey
                            ) { plaintext in plaintext.count }
                        }
                        var touched = value.count
                        for offset in stride(from: 0, to: value.count, by: 64) { touched &+= Int(value[offset]) }
                        return try resealed.values[index].withUnsafeBytes { copy in
                            try RecordEnvelope.withOpened(
                                .body, of: copy, storeID: keyring.storeID, database: database.name, key: keyBytes, keys: { _ in resealed.key }
                            ) { plaintext in plaintext.count &+ touched }
                        }
                    }
                } }
            }
            guard let count = opened ?? nil, count > 0 else { throw TokenCacheError(.corruptRecord, "a sampled record did not open") }
            return count
        }
        do {
            var sink = 0
            for index in keys.indices { sink &+= try getAndDecrypt(index) }
            var timings: [UInt64] = []
            timings.reserveCapacity(samples)
            for i in 0..<samples {
                let start = MonotonicClock.nanoseconds()
                sink &+= try getAndDecrypt(i % keys.count)
                timings.append(MonotonicClock.nanoseconds() - start)
            }
            precondition(sink != 0)
            return timings
        } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
    }

    /// The records under `keys`, each re-sealed under `cipher` with a fresh throwaway key (same key id, summary,
    /// body and associated data): what the floor of the store's other cipher opens. The plaintext passes only through
    /// buffers that are wiped; the throwaway key seals nothing else and is dropped with the measurement.
    private static func resealed(_ keys: [[UInt8]], of store: RecordStore, under cipher: RecordCipher) throws
        -> (key: RecordKey, values: [[UInt8]])
    {
        let key = RecordKey(cipher: cipher, key: try SecureKey(randomCount: FormatConstants.dataKeyCount))
        let keyring = store.keyring
        let database = KeySpace.accessTokens
        let values = try store.backend.read { transaction in
            try keys.map { storageKey in
                    let value = try transaction.withValue(in: database, forKey: storageKey) { value in try value.withUnsafeBytes { value in
                        let slot = RecordSlot(storeID: keyring.storeID, database: database.name, key: storageKey)
                        guard let keyID = RecordEnvelope.keyID(of: value),
                            let body = try RecordEnvelope.open(.body, of: value, slot: slot, keys: keyring.recordKey)
                        else { return [UInt8]?.none }
                        let summary = try RecordEnvelope.open(.summary, of: value, slot: slot, keys: keyring.recordKey)
                        return try body.withUnsafeBytes { body in
                            try Self.withOptionalBytes(summary) { summary in
                                var sealed = [UInt8](repeating: 0, count: RecordEnvelope.sealedCount(summaryPlaintext: summary?.count, bodyPlaintext: body.count))
                                try sealed.withUnsafeMutableBytes { output in
                                    try RecordEnvelope.seal(summary: summary, body: body, slot: slot, keyID: keyID, key: key, into: output)
                                }
                                return sealed
                            }
                        }
                    } }
                    guard let value = value ?? nil else { throw TokenCacheError(.corruptRecord, "a sampled record did not open") }
                    return value
            }
        }
        return (key, values)
    }

    private static func withOptionalBytes<R>(_ buffer: SecureBuffer?, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard let buffer else { return try body(nil) }
        return try buffer.withUnsafeBytes { try body($0) }
    }
}
