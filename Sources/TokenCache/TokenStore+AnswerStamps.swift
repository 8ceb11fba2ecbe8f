internal import TokenCacheStorage

extension TokenStore {
    /// Whether a lookup now would read what the one stamped `stamp` read, as far as this process can know without
    /// asking the store: on a local store, whether no commit happened since (a read of the map's meta page); on a
    /// shared store, whether no change to the buckets it depended on was announced or committed by this host since,
    /// and none was missed while the change listener was away. Costs no round trip.
    public func isCurrent(_ stamp: AnswerStamp) -> Bool {
        if let buckets = stamp.buckets, let versioning = store.backend as? any BucketVersioning { return versioning.isCurrent(buckets) }
        return store.backend.lastCommitID == stamp.snapshotID
    }
}
