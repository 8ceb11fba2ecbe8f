import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Environment {
    /// The name a copy has in its destination directory until it is complete. A leftover one is the trace of a copy
    /// that was interrupted; it is never opened as a store.
    package static let partialCopyName = "." + StoreFileName.data + ".partial"

    /// Writes a consistent copy of this environment as `data.mdb` in `directory` (an existing directory), while other
    /// threads and processes go on reading and writing: one read transaction's snapshot of the named `databases`, every
    /// entry copied in key order and appended, so that the copy's pages are full (free pages and the empty third of
    /// pages filled in random key order left out). The copy is an environment of its own, with the same databases and
    /// records.
    ///
    /// The file is created by this library, not by LMDB's `mdb_env_copy2` (which creates it with mode 0666 less the
    /// umask): exactly 0600, under ``partialCopyName``, synced, then linked to `data.mdb` and the directory synced. So
    /// `data.mdb` in `directory` is either absent or complete, and an existing one is never replaced.
    ///
    /// Holds the transaction gate shared while it copies, as a long read does: a map growth in this process waits
    /// for the copy to end.
    /// - Parameter progress: Receives the bytes written so far, about ten times a second, from another thread.
    /// - Returns: The size of the copy in bytes.
    /// - Throws: `LMDBError`: `EEXIST` when `directory` already holds `data.mdb` or a
    ///   leftover partial copy, `ENOSPC` and `EIO` from writing; `.usedAfterFork`; LMDB's errors from the copy.
    package func copy(
        intoDirectory directory: String, databases: [String], progress: (@Sendable (Int) -> Void)? = nil
    ) throws(LMDBError) -> Int {
        try checkUsable()
        let partial = directory + "/" + Self.partialCopyName
        let final = directory + "/" + StoreFileName.data
        let fd = try FileSystem.createExclusively(partial)
        var published = false
        defer {
            close(fd)
            if !published { unlink(partial) }
        }
        let size: Int
        do {
            let monitor = progress.map { FileGrowthMonitor(fd: fd, report: $0) }
            defer { monitor?.stop() }
            try writeCopy(to: fd, path: partial, databases: databases)
            try FileSystem.sync(fd: fd)
            size = try FileSystem.status(of: fd).size
        }
        try FileSystem.publish(partial, as: final, inDirectory: directory)
        published = true
        return size
    }

    /// Copies in key order until it succeeds, adopting a map another process grew (the copy's read transaction fails
    /// with `MDB_MAP_RESIZED` then) and clearing dead readers' slots once when the table is full, each time starting the
    /// file again from empty.
    private func writeCopy(to fd: Int32, path: String, databases: [String]) throws(LMDBError) {
        let state = ThreadState.current
        var recovery = ReadFailureRecovery()
        while true {
            enterShared(state)
            let rc = copyOnce(path: path, databases: databases)
            leaveShared(state)
            if rc == MDB_SUCCESS { return }
            try recovery.recover(from: LMDBError(code: rc), in: self, state)
            try FileSystem.restart(fd: fd)
        }
    }

    /// One attempt of ``writeCopy(to:path:databases:)``: its result code.
    private func copyOnce(path: String, databases: [String]) -> Int32 {
        do throws(LMDBError) {
            var pointer: OpaquePointer?
            try LMDBError.check(lmdb_txn_begin(handle, readOnly: true, &pointer))
            guard let source = pointer else { throw .invalidArgument }
            defer { lmdb_txn_abort(source) }
            let copy = try DetachedEnvironment(
                writingDataFile: path, maxDatabases: databases.count + 1, mapSize: Int(lmdb_env_info(handle).me_mapsize)
            )
            try DetachedEnvironment.copyInKeyOrder(from: source, databases, to: copy)
            return MDB_SUCCESS
        } catch {
            return error.code
        }
    }
}
