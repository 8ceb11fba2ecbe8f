/// What an answer read by one fetch depends on at a backend that versions its records by bucket (a shared store):
/// finer than a commit id, so that a change of one account's records leaves the answers kept for every other account
/// standing.
///
/// A *bucket* is a group of keys a backend versions together (on a server, every record of one home account, of one
/// application's metadata, and the header as the global bucket: FORMAT.md §2.2). The stamp lists each bucket the
/// fetch's ranges lie in, with the version the fetch read of it and what else the backend needs to judge it later
/// (``BucketVersioning/isCurrent(_:)``); its contents are the backend's own business. A class, so that a lookup's
/// result carries one reference, nil on a local store, rather than copies of its array.
package final class BucketStamp: Sendable {
    /// One bucket an answer depends on.
    package struct Dependency: Sendable {
        /// The bucket's id: the first bytes its keys share, empty for the global bucket.
        package let bucket: [UInt8]
        /// The bucket's version as the fetch read it (0: never written).
        package let version: Int64
        /// The backend's count of this host's own commits to the bucket when the fetch began: a commit of this host's
        /// that touched the bucket since voids the stamp before its notification comes back.
        package let ownCommits: Int

        package init(bucket: [UInt8], version: Int64, ownCommits: Int) {
            self.bucket = bucket
            self.version = version
            self.ownCommits = ownCommits
        }
    }

    /// The backend's generation when the fetch began: it moves when the backend may have missed changes (its change
    /// listener reconnected), and the stamp then holds only once its buckets were read again.
    package let generation: Int
    package let dependencies: [Dependency]

    package init(generation: Int, dependencies: [Dependency]) {
        self.generation = generation
        self.dependencies = dependencies
    }
}

/// A backend that versions its records by bucket and can say whether an answer stamped by a fetch still holds.
package protocol BucketVersioning: AnyObject, Sendable {
    /// Whether nothing the answer stamped `stamp` depends on has changed since its fetch, as far as this host can
    /// know (a change announced, a reconnection's reading of the versions, a commit of its own).
    func isCurrent(_ stamp: BucketStamp) -> Bool
}
