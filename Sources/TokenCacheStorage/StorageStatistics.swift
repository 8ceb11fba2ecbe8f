/// What a backend can tell about how its storage is laid out, for an operator (`cachetool stats`): more than
/// ``StorageUsage``, and costlier to gather (one read transaction, the reader table, the files).
package struct StorageStatistics: Sendable {
    /// One key space's B-tree (LMDB's `mdb_stat`); zero pages and depth for a backend without pages.
    package struct Space: Sendable, Equatable {
        package var entries: Int
        package var depth: Int
        package var branchPages: Int
        package var leafPages: Int
        package var overflowPages: Int

        package init(entries: Int, depth: Int = 0, branchPages: Int = 0, leafPages: Int = 0, overflowPages: Int = 0) {
            self.entries = entries
            self.depth = depth
            self.branchPages = branchPages
            self.leafPages = leafPages
            self.overflowPages = overflowPages
        }
    }

    /// A reader slot some process holds.
    package struct Reader: Sendable, Equatable {
        package var pid: Int32
        /// The snapshot it reads; nil between transactions.
        package var transactionID: Int?
        /// Its process is gone.
        package var isStale: Bool

        package init(pid: Int32, transactionID: Int?, isStale: Bool) {
            self.pid = pid
            self.transactionID = transactionID
            self.isStale = isStale
        }
    }

    package var spaces: [KeySpace: Space]
    package var pageSize: Int
    package var usage: StorageUsage
    package var readers: [Reader]
    /// File name → size in bytes.
    package var files: [String: Int]

    package init(spaces: [KeySpace: Space], pageSize: Int, usage: StorageUsage, readers: [Reader], files: [String: Int]) {
        self.spaces = spaces
        self.pageSize = pageSize
        self.usage = usage
        self.readers = readers
        self.files = files
    }
}
