internal import TokenCacheMSAL
internal import TokenCache
import Foundation
internal import TokenCacheRecords
internal import TokenCacheStorage

/// ``SyntheticPopulation/Layout/keyOrdered``: a bulk load of the population into an empty store.
///
/// Why not puts: a put is built for a store of unknown contents. It reads where the record is (for an access token,
/// its bucket, and the lone token under the bucket prefix, decrypted), its revision, and the bucket again after
/// writing, moving a lone token out when a second one joins it. And puts in the population's order land at random
/// keys, so at a million access tokens each transaction dirties (and its commit rewrites) one page per record all
/// over the file: most of the time a put-by-put population takes. Here the store starts empty and each account is
/// written whole, once, so every record's key, placement (FORMAT.md §4.3) and revision (1) is known in advance.
extension SyntheticPopulation {
    /// Writes the population's accounts into an empty store, in the order of their records' keys, in durable write
    /// transactions of about `recordsPerTransaction` records; returns the number of records written.
    ///
    /// * Each account's records are sealed under their final keys (``RecordStore/sealedValue(_:key:revision:now:)``,
    ///   the sealing a put does) ahead of the transaction that stores them, on every core, while the previous
    ///   transaction is written and committed: a transaction only copies sealed values into the backend.
    /// * Every per-account key starts with the account prefix `P(hid)`, so with the accounts sorted by it each
    ///   database receives its records in ascending key order, across transactions: LMDB only ever fills the last
    ///   page, and a commit writes just the new pages.
    /// * Within a transaction each pair of neighbouring keys is put in reverse order (the second, then the first). In
    ///   ascending order LMDB splits a full last page leaving all but one of its records behind, which for this
    ///   population's records (two of the large kinds fill a 4 KiB page) leaves one record per page, a file a third
    ///   larger than a store grown by random puts; with the pairs reversed every page keeps two.
    func populateInKeyOrder(_ cache: TokenStore, recordsPerTransaction: Int, progress: (Int) -> Void) throws -> Int {
        let store = cache.store
        let existing = try cache.read { try $0.counts() }
        guard existing.values.allSatisfy({ $0 == 0 }) else {
            throw TokenCacheError(.invalidArgument, "a key-ordered population is written into an empty store; this one holds \(existing)")
        }
        let runs = transactionRuns(keyOrder(index: store.keyring.index), recordsPerTransaction: recordsPerTransaction)
        let parts = max(1, ProcessInfo.processInfo.activeProcessorCount)
        final class Slot: @unchecked Sendable { var batch: Result<SealedBatch, any Error>? }  // handed over through DispatchGroup.wait
        func sealAhead(_ run: ArraySlice<Int>) -> (slot: Slot, group: DispatchGroup) {
            let slot = Slot(), group = DispatchGroup(), population = self, now = TokenStore.currentTime()
            DispatchQueue.global().async(group: group) {
                slot.batch = Result { try SealedBatch(population: population, accounts: run, parts: parts, store: store, now: now) }
            }
            return (slot, group)
        }
        var next = sealAhead(runs[0])
        var written = 0
        for number in runs.indices {
            next.group.wait()
            let current = try next.slot.batch!.get()
            if number + 1 < runs.count { next = sealAhead(runs[number + 1]) }
            try cache.write { writer in
                for (database, records) in current.databases {
                    for record in records {
                        try record.value.withUnsafeBytes { try writer.writeTransaction.put(in: database, key: record.key, value: $0) }
                    }
                }
            }
            written += current.count
            progress(written)
        }
        return written
    }

    /// The accounts in the order of their account prefix `P(hid)` under `index`, which every per-account key starts
    /// with (FORMAT.md §4.3).
    func keyOrder(index: BlindIndex) -> [Int] {
        let prefixes = (0..<accounts).map { index.accountPrefix(account($0).homeAccountID) }
        return (0..<accounts).sorted { prefixes[$0].lexicographicallyPrecedes(prefixes[$1]) }
    }

    /// The records of a run of whole accounts, sealed under their final keys: per database, in the order to put them.
    struct SealedBatch: Sendable {
        struct Record: Sendable {
            var key: [UInt8]
            var value: [UInt8]
        }

        /// The databases in the order `seal(account:store:now:into:)` fills them.
        static let databaseNames = [KeySpace.accessTokens, KeySpace.accounts, KeySpace.idTokens, KeySpace.refreshTokens]

        var databases: [(name: KeySpace, records: [Record])]
        var count: Int { databases.reduce(0) { $0 + $1.records.count } }

        /// Seals the records of `accounts`, split over `parts` threads.
        init(population: SyntheticPopulation, accounts: ArraySlice<Int>, parts: Int, store: RecordStore, now: Int64) throws {
            final class Part: @unchecked Sendable { var records: Result<[[Record]], any Error>? }  // each written by one thread
            let results = (0..<parts).map { _ in Part() }
            let size = (accounts.count + parts - 1) / parts
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let start = accounts.startIndex + min(accounts.count, part * size)
                let end = accounts.startIndex + min(accounts.count, (part + 1) * size)
                results[part].records = Result {
                    var records = [[Record]](repeating: [], count: Self.databaseNames.count)
                    for index in accounts[start..<end] { try population.seal(account: index, store: store, now: now, into: &records) }
                    return records
                }
            }
            var databases = Self.databaseNames.map { (name: $0, records: [Record]()) }
            for part in results {
                for (database, records) in try part.records!.get().enumerated() { databases[database].records += records }
            }
            for database in databases.indices {
                databases[database].records.sort { $0.key.lexicographicallyPrecedes($1.key) }
                // Neighbours in reverse order: see populateInKeyOrder.
                for first in stride(from: 0, to: databases[database].records.count - 1, by: 2) {
                    databases[database].records.swapAt(first, first + 1)
                }
            }
            self.databases = databases
        }
    }

    /// Appends the sealed records of account `index` to `records` (access tokens, accounts, ID tokens, refresh
    /// tokens: ``SealedBatch/databaseNames``), each under the key a put into a store without them chooses: its
    /// storage key, or for a bucket's lone access token the bucket prefix where the store places lone tokens there
    /// (FORMAT.md §4.3). Every token of a bucket belongs to its account, so the account's own tokens say which
    /// buckets hold one.
    func seal(account index: Int, store: RecordStore, now: Int64, into records: inout [[SealedBatch.Record]]) throws {
        let keys = store.keyring.index
        func append<S: StorableEntity>(_ entity: S, key: [UInt8], to database: Int) throws {
            try entity.validate()
            records[database].append(SealedBatch.Record(key: key, value: try store.sealedValue(entity, key: key, revision: 1, now: now)))
        }
        let info = account(index)
        let tokens = (0..<accessTokenCount(account: index)).map { accessToken(account: index, slot: $0, info: info) }
        let entryKeys = tokens.map { AccessToken.storageKey(for: $0.key, index: keys) }
        let buckets = entryKeys.map { $0.prefix(RecordStore.bucketPrefixCount) }
        for (token, entryKey) in zip(tokens, entryKeys) {
            let bucket = entryKey.prefix(RecordStore.bucketPrefixCount)
            let lone = store.placesLoneTokensAtBucketPrefix && buckets.count { $0 == bucket } == 1
            try append(token, key: lone ? Array(bucket) : entryKey, to: 0)
        }
        let companions = companions(account: index, info: info)
        for record in companions.accounts { try append(record, key: Account.storageKey(for: record.key, index: keys), to: 1) }
        for record in companions.idTokens { try append(record, key: IDToken.storageKey(for: record.key, index: keys), to: 2) }
        for record in companions.refreshTokens { try append(record, key: RefreshToken.storageKey(for: record.key, index: keys), to: 3) }
    }
}
