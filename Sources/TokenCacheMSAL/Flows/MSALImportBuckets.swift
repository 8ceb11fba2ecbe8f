internal import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

/// The bucket indexes (``MSALImportBucketIndex``) of one import, kept from one of its transactions to the next while
/// nothing else writes in between.
///
/// Why keep them: a bucket read again for every batch would cost the import the whole bucket per batch, which for
/// one large bucket is quadratic again (in the file over the batch size). Why they can be dropped: another process
/// that commits between two batches may have added or removed tokens, so a commit that is not the import's own
/// makes every index be read again, from the store, when its bucket is next met. The store's last commit id tells:
/// inside the import's transaction no one else commits, and the next one finds it advanced by one when the import
/// wrote, unchanged when it did not (a backend that counts empty commits only makes the indexes be read again).
final class MSALImportBuckets {
    private var indexes: [[UInt8]: MSALImportBucketIndex] = [:]
    /// Every bucket starts empty: a replacing import removed everything first.
    private let storeEmptied: Bool
    /// The last commit before the current transaction, and whether it is still running (a run of the transaction
    /// closure that does not reach ``committed()`` is repeated or failed: its changes to the indexes are dropped).
    private var transaction: (lastCommit: Int, open: Bool)?
    /// Whether the current transaction wrote anything (its commit then advances the store's commit id).
    var wrote = false
    /// What the import did to meet the stored tokens, for the tests that count it per entry.
    private(set) var work = MSALImportWork()
    private var retiredSteps = 0

    init(storeEmptied: Bool) {
        self.storeEmptied = storeEmptied
    }

    /// At the start of each run of a write transaction's closure, with the store's last commit id.
    func begin(lastCommit: Int) {
        var expected: Int? = nil
        if let previous = transaction, !previous.open { expected = previous.lastCommit + (wrote ? 1 : 0) }
        if lastCommit != expected { drop() }
        transaction = (lastCommit, true)
        wrote = false
    }

    /// After the transaction committed.
    func committed() {
        transaction?.open = false
    }

    private func drop() {
        retiredSteps += indexes.values.reduce(0) { $0 + $1.steps }
        indexes = [:]
        work.indexSteps = retiredSteps
    }

    /// Runs `body` on the index of `bucket`, reading the bucket's stored tokens first if it has none: those of them
    /// not written by this import (`isImported`), damaged records left out (they are `verify`'s to report).
    func withIndex<R>(
        of bucket: [UInt8], in writer: CacheWriter, isImported: (RecordAddress) -> Bool, _ body: (inout MSALImportBucketIndex) -> R
    ) throws -> R {
        if indexes[bucket] == nil { indexes[bucket] = storeEmptied ? MSALImportBucketIndex() : try read(bucket, in: writer, isImported: isImported) }
        defer { work.indexSteps = retiredSteps + indexes.values.reduce(0) { $0 + $1.steps } }
        return body(&indexes[bucket]!)
    }

    private func read(_ bucket: [UInt8], in writer: CacheWriter, isImported: (RecordAddress) -> Bool) throws -> MSALImportBucketIndex {
        let store = writer.store
        var index = MSALImportBucketIndex()
        try writer.writeTransaction.forEach(in: KeySpace.accessTokens, prefix: bucket) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
            let key = Array(key)
            work.bucketRecordsVisited += 1
            // A token of the import under its entry key is known by its key alone; a lone one (under the bucket
            // prefix) must be opened to learn it.
            if key.count != RecordStore.bucketPrefixCount, isImported(RecordAddress(kind: .accessToken, key: key)) { return true }
            work.recordsOpened += 1
            guard let summary = try? store.openSummary(value, key: key), let scopes = try? summary.scopes else { return true }
            let entryKey = store.keyring.index.digest("at-entry", summary.environment, summary.canonicalTarget, after: bucket)
            guard !isImported(RecordAddress(kind: .accessToken, key: entryKey)) else { return true }
            index.add(
                MSALImportBucketIndex.Token(
                    entryKey: entryKey, environment: summary.environment, scopes: scopes,
                    stamp: ImportMerge.Stamp(writtenAt: summary.cachedAt, expiresOn: summary.expiresOn)),
                aliases: store.aliases)
            return true
        } } }
        return index
    }
}

/// The work an import did to meet the stored access tokens of the buckets it wrote to: what a test counts per
/// imported entry, where time would be too noisy to compare.
struct MSALImportWork: Sendable, Hashable {
    /// Records the bucket reads stepped over.
    var bucketRecordsVisited = 0
    /// Of those, the records opened (decrypted).
    var recordsOpened = 0
    /// Positions of the indexes' lists looked at.
    var indexSteps = 0
}
