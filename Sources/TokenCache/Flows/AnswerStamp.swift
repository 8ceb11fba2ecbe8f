internal import TokenCacheStorage

/// What a silent lookup's answer was read from, so that a cache of answers can ask later whether the store would
/// still answer the same (``TokenStore/isCurrent(_:)``).
///
/// On a local store it is the commit the lookup read (``snapshotID``): any later commit, anywhere in the store, voids
/// it. On a shared store it also names the buckets the lookup's records lie in (the account's, the application's and
/// the global one) and the versions it read of them: a change elsewhere in the store leaves it standing.
public struct AnswerStamp: Sendable {
    /// The commit the lookup read (``TokenStore/lastCommitID`` as it was for this snapshot).
    public let snapshotID: Int
    /// The buckets the lookup depended on, when its backend versions records by bucket.
    let buckets: BucketStamp?

    /// A stamp of commit `snapshotID` alone (tests of a cache of answers).
    package init(snapshotID: Int) { self.init(snapshotID: snapshotID, buckets: nil) }

    init(snapshotID: Int, buckets: BucketStamp?) {
        self.snapshotID = snapshotID
        self.buckets = buckets
    }
}
