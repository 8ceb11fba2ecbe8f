import CLMDB
import Foundation

/// The B-tree of one database, as `mdb_stat` reports it.
package struct DatabaseStatistics: Sendable, Equatable {
    package var entries: Int
    /// Levels from the root to the leaves (0 for an empty database).
    package var depth: Int
    package var branchPages: Int
    package var leafPages: Int
    /// Pages holding values too large for a leaf page.
    package var overflowPages: Int

    package var pages: Int { branchPages + leafPages + overflowPages }
}

/// A slot of the reader lock table that some process holds.
package struct ReaderSlot: Sendable, Equatable {
    package var pid: Int32
    /// The snapshot the slot's read transaction reads; nil when the slot is kept between transactions.
    package var transactionID: Int?
    /// The process is gone: the slot is stale (cleared by the next `mdb_reader_check`, which every open runs).
    package var isStale: Bool

    /// Parses one line of `mdb_reader_list` (`pid thread txnid`, txnid `-` when idle); nil for its header lines.
    static func parse(_ line: Substring) -> ReaderSlot? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
        return ReaderSlot(pid: pid, transactionID: Int(fields[2]), isStale: !Self.isAlive(pid))
    }

    static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}

extension ReadTransaction {
    /// The B-tree figures of `database` in this transaction's snapshot.
    package final func statistics(of database: Database) throws(LMDBError) -> DatabaseStatistics {
        var stat = MDB_stat()
        try LMDBError.check(lmdb_stat(liveHandle, try dbi(database), &stat))
        return DatabaseStatistics(
            entries: Int(stat.ms_entries), depth: Int(stat.ms_depth), branchPages: Int(stat.ms_branch_pages),
            leafPages: Int(stat.ms_leaf_pages), overflowPages: Int(stat.ms_overflow_pages)
        )
    }
}

extension Environment {
    /// The reader slots in use, across every process (`mdb_reader_list`), and whether each holder still runs.
    package func readerSlots() -> [ReaderSlot] {
        final class Lines { var text = "" }
        let lines = Lines()
        let context = Unmanaged.passUnretained(lines).toOpaque()
        _ = withSharedGate {
            lmdb_reader_list(handle, { message, context in
                guard let message, let context else { return 0 }
                Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                return 0
            }, context)
        }
        return withExtendedLifetime(lines) { lines.text.split(separator: "\n").compactMap(ReaderSlot.parse) }
    }

    /// The sizes of the environment's files (`data.mdb`, `lock.mdb`) in bytes; a file that cannot be read is left out.
    package func fileSizes() -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in [StoreFileName.data, StoreFileName.lockTable] {
            var status = stat()
            if stat(directory + "/" + name, &status) == 0 { sizes[name] = Int(status.st_size) }
        }
        return sizes
    }
}
