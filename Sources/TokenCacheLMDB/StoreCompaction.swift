#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Rewrites a store directory's `data.mdb` compacted and puts it in place of the old one, so that the file shrinks to
/// the records it holds: every entry copied in key order into a new file, each appended, so that its leaf pages are
/// full (LMDB's own compacting copy keeps each page as it is, and pages of a store whose keys arrived in random order,
/// as blind-index keys do, are a third empty).
///
/// It needs the store to itself. A process that has the old `data.mdb` mapped would go on reading and writing the old
/// file after it is replaced: its later commits would be lost. So compaction first takes the open lock (`OpenLock`:
/// openers of this library wait behind it), then LMDB's exclusive lock on `lock.mdb` (``LockTableExclusion``), which
/// it gets only if no process has the store open, and which keeps every other LMDB opener waiting until it is done.
/// If a process has the store open, nothing is written and ``StoreInUse`` names it. This process must not have the
/// store open either.
///
/// Steps, and what a crash (the process killed, or the machine stopped) at each leaves:
/// 1. A leftover ``partialFileName`` of an earlier, interrupted compaction is removed. *Old store.*
/// 2. The compacted copy is written as ``partialFileName`` in the store directory (created 0600, exclusively; LMDB
///    writes it without a lock table) and fsynced. *Old store intact; a partial file is left, which LMDB never opens and the next compaction removes.*
/// 3. The copy is opened by itself and must hold as many entries in every database as the store. *Old store.*
/// 4. `rename` puts it in place of `data.mdb`, and the directory is fsynced. *A crash before the rename leaves the old
///    store, one after it the new: never neither, and both hold the same records (nobody could write meanwhile). Until
///    the directory sync, a power loss may bring back either.*
/// 5. The locks are released. `lock.mdb` is left as it is: the next opener finds no other user, takes LMDB's exclusive
///    lock and re-initialises the lock table from the new file's meta pages (the compacted file's transaction ids
///    restart from 1, which a table kept from the old file would contradict; no process kept it).
///
/// A program that opens the store without LMDB's locking (`MDB_NOLOCK`) is not kept out; nor is one that was blocked
/// on LMDB's lock when compaction began and, lacking this library's open lock, trusts the old lock table afterwards:
/// this library's writers then refuse to commit (`LMDBError.staleLockTable`) until every process has closed the store.
package enum StoreCompaction {
    /// The compacted copy's name in the store directory until it is put in place.
    package static let partialFileName = StoreFileName.data + ".compacting"

    package struct Outcome: Sendable {
        /// `data.mdb`'s size before and after, in bytes.
        package let sizeBefore: Int
        package let sizeAfter: Int
        /// The entries of every named database, the same before and after.
        package let entries: [String: Int]
    }

    /// Compacts the store in `directory`, whose environment has the named `databases`.
    /// - Parameter progress: Receives the bytes of the copy written so far, about ten times a second, from another
    ///   thread.
    /// - Throws: ``StoreInUse`` when another process (or this one) has the store open; `LMDBError`: `.noSuchFile` when
    ///   there is no `data.mdb`, `.notFound` for a missing database, `.truncatedDataFile`, `.corrupted` when the copy
    ///   does not hold what the store holds, errno values from writing (`ENOSPC`, `EIO`) and LMDB's errors from the
    ///   copy. The store is unchanged whenever it throws.
    package static func compact(
        directory: String, databases: [String], lockTimeout: Duration = EnvironmentOptions().lockTimeout, progress: (@Sendable (Int) -> Void)? = nil
    ) throws -> Outcome {
        try Environment.checkLibraryVersion()
        let resolved = try FileSystem.resolvedPath(directory)
        let dataPath = resolved + "/" + StoreFileName.data, partial = resolved + "/" + partialFileName
        guard FileSystem.isDirectory(resolved) else { throw LMDBError.invalidArgument }
        guard FileSystem.identity(at: dataPath) != nil else { throw LMDBError.noSuchFile }
        try checkNotOpenHere(resolved)
        let openLock = try OpenLock.acquire(directory: resolved, readOnly: false, timeout: lockTimeout)
        // Again under the open lock: an environment opened by another thread meanwhile has finished opening now.
        try checkNotOpenHere(resolved)
        let exclusion = try LockTableExclusion.acquire(path: resolved + "/" + StoreFileName.lockTable)

        try FileSystem.removeIfPresent(partial)
        let sizeBefore = FileSystem.size(at: dataPath) ?? 0
        let maxDatabases = databases.count + 1
        let entries: [String: Int]
        do {
            let source = try DetachedEnvironment(path: resolved, isDataFile: false, maxDatabases: maxDatabases)
            entries = try source.entryCounts(databases)
            let fd = try FileSystem.createExclusively(partial)
            defer { close(fd) }
            let monitor = progress.map { FileGrowthMonitor(fd: fd, report: $0) }
            defer { monitor?.stop() }
            do {
                let copy = try DetachedEnvironment(writingDataFile: partial, maxDatabases: maxDatabases, mapSize: source.mapSize)
                try source.copyInKeyOrder(databases, to: copy)
            }
            try FileSystem.sync(fd: fd)
            let copy = try DetachedEnvironment(path: partial, isDataFile: true, maxDatabases: maxDatabases)
            guard try copy.entryCounts(databases) == entries else { throw LMDBError.corrupted }
        } catch {
            unlink(partial)
            throw error
        }
        try FileSystem.replace(dataPath, with: partial, inDirectory: resolved)
        let sizeAfter = FileSystem.size(at: dataPath) ?? 0
        _ = consume exclusion
        _ = consume openLock
        return Outcome(sizeBefore: sizeBefore, sizeAfter: sizeAfter, entries: entries)
    }

    private static func checkNotOpenHere(_ directory: String) throws(StoreInUse) {
        if Environment.isInUseInThisProcess(directory: directory) {
            throw StoreInUse(pid: Int(getpid()), command: nil, isThisProcess: true)
        }
    }
}
