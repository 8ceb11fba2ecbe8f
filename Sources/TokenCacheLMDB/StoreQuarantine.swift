#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves a damaged store directory aside, whole, under a new name beside it, so that a new store can be created in
/// its place while the old files stay for a later look (or a salvage).
///
/// Like compaction it needs the store to itself: a process that has the old files open would go on writing into
/// the moved directory. So it takes the open lock (`OpenLock`) and LMDB's exclusive lock on `lock.mdb`
/// (``LockTableExclusion``), which it gets only if no process has the store open; neither lock needs a readable
/// data file. The move is one `rename` within the parent directory (which is then synced), so a crash leaves the
/// directory under its old name or its new one, never half moved; the target must not exist.
package enum StoreQuarantine {
    /// Renames `directory` to `target` (a path in the same parent directory that does not exist).
    /// - Throws: ``StoreInUse`` when a process (this one included) has the store open; `LMDBError`: `.noSuchFile`
    ///   without a `data.mdb`, errno values from `rename` (`EEXIST`/`ENOTEMPTY` when the target exists, `EXDEV`).
    package static func moveAside(directory: String, to target: String, lockTimeout: Duration = EnvironmentOptions().lockTimeout) throws {
        let resolved = try FileSystem.resolvedPath(directory)
        guard FileSystem.isDirectory(resolved) else { throw LMDBError.invalidArgument }
        guard FileSystem.identity(at: resolved + "/" + StoreFileName.data) != nil else { throw LMDBError.noSuchFile }
        if Environment.isInUseInThisProcess(directory: resolved) { throw StoreInUse(pid: Int(getpid()), command: nil, isThisProcess: true) }
        let openLock = try OpenLock.acquire(directory: resolved, readOnly: false, timeout: lockTimeout)
        let exclusion = try LockTableExclusion.acquire(path: resolved + "/" + StoreFileName.lockTable)
        // rename(2) replaces an empty directory at the target: refuse any existing target first.
        var status = stat()
        guard lstat(target, &status) != 0 else { throw LMDBError(code: EEXIST) }
        guard rename(resolved, target) == 0 else { throw LMDBError(code: errno) }
        let parent = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
        try FileSystem.syncDirectory(parent.isEmpty ? "." : parent)
        _ = consume exclusion
        _ = consume openLock
    }
}
