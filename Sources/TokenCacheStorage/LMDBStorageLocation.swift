internal import TokenCacheLMDB

#if canImport(Glibc)
import Glibc
#endif

/// A store directory kept by LMDB (``LMDBRecordBackend``), with the options it is opened with: the LMDB side of every
/// maintenance operation, so that nothing above the storage module names LMDB's files, its locks or its tools.
///
/// It compacts (``StoreCompaction``: LMDB's compacting copy, renamed over the data file) and moves a store aside
/// (``StoreQuarantine``), each only while no process has the store open; the open backend copies itself
/// (``LMDBRecordBackend/copy(to:progress:)``). Every operation refuses a network filesystem unless the options allow it.
package struct LMDBStorageLocation: StorageLocation, CompactingStorage, QuarantiningStorage {
    package let options: LMDBRecordBackend.Options

    package init(_ options: LMDBRecordBackend.Options) {
        self.options = options
    }

    package var location: String { options.directory }
    package var kind: String { "LMDB" }
    package var directory: String? { options.directory }

    /// LMDB's data file and lock table, and this library's open and writer locks (FORMAT.md §2).
    package var files: [StoreFile] {
        [
            StoreFile(directory: options.directory, name: StoreFileName.data, role: .records),
            StoreFile(directory: options.directory, name: StoreFileName.lockTable, role: .sharedState),
            StoreFile(directory: options.directory, name: StoreFileName.openLock, role: .lock),
            StoreFile(directory: options.directory, name: StoreFileName.writerLock, role: .lock),
        ]
    }

    /// Whether the data file exists: it does from the first open of a store on (an interrupted creation leaves it
    /// without a header, which the store tells apart when it reads it).
    package func holdsStore() -> Bool {
        var status = stat()
        return lstat(options.directory + "/" + StoreFileName.data, &status) == 0
    }

    package func sizeAtRest() -> Int? {
        var status = stat()
        return stat(options.directory + "/" + StoreFileName.data, &status) == 0 ? Int(status.st_size) : nil
    }

    package func relocated(to location: String) -> any StorageLocation {
        var options = options
        options.directory = location
        return LMDBStorageLocation(options)
    }

    /// LMDB creates a missing environment whenever it may write; without `create`, a directory with no data file is
    /// refused first, so that an open never leaves an empty store behind.
    package func open(readOnly: Bool, create: Bool) throws(StorageError) -> any RecordBackend {
        if !create, !holdsStore() { throw StorageError(.storeNotFound, "no token cache at \(options.directory)") }
        var options = options
        options.readOnly = readOnly
        return try LMDBRecordBackend.open(options)
    }

    /// LMDB must not be used on network or FUSE filesystems (lmdb.h: "Do not use LMDB databases on remote
    /// filesystems"): its locking and mmap coherence assume a local filesystem.
    func checkLocalFilesystem() throws(StorageError) {
        if !options.allowNetworkFilesystem, let name = FilesystemKind.unsupportedFilesystem(at: options.directory) {
            throw StorageError(.unsupportedEnvironment, "\(options.directory) is on a \(name) filesystem; LMDB stores must be on a local filesystem")
        }
    }

    /// Rewrites the store compacted and puts it in place (``StoreCompaction``), once no process has it open.
    package func compact(progress: (@Sendable (Int) -> Void)?) throws(StorageError) -> StorageCompaction {
        let directory = options.directory
        try checkLocalFilesystem()
        do {
            let outcome = try StoreCompaction.compact(directory: directory, databases: KeySpace.allCases.map(\.name), lockTimeout: options.lockTimeout, progress: progress)
            return StorageCompaction(sizeBefore: outcome.sizeBefore, sizeAfter: outcome.sizeAfter, entries: Self.bySpace(outcome.entries))
        } catch let inUse as StoreInUse {
            throw StorageError(.storeInUse, Self.describe(inUse, directory: directory))
        } catch LMDBError.notFound {
            throw StorageError(.corruptStore, "the store at \(directory) lacks its databases (was it created by token-cache?)")
        } catch LMDBError.corrupted {
            throw StorageError(
                .corruptStore, "the compacted copy of \(directory) did not hold what the store holds; the store was left as it was"
            )
        } catch let error as LMDBError {
            throw StorageError(error, directory: directory)
        } catch {
            throw StorageError(.ioFailure, "compacting \(directory) failed: \(type(of: error))")
        }
    }

    /// The entry counts of a compaction, named by key space.
    private static func bySpace(_ entries: [String: Int]) -> [KeySpace: Int] {
        var bySpace: [KeySpace: Int] = [:]
        for space in KeySpace.allCases { bySpace[space] = entries[space.name] }
        return bySpace
    }

    /// Moves the store directory aside to `target` (``StoreQuarantine``), refusing while any process has it open.
    package func moveAside(to target: String) throws(StorageError) {
        let directory = options.directory
        do {
            try StoreQuarantine.moveAside(directory: directory, to: target, lockTimeout: options.lockTimeout)
        } catch let inUse as StoreInUse {
            throw StorageError(.storeInUse, Self.describe(inUse, directory: directory, doing: "moving it aside", retry: "move it aside"))
        } catch LMDBError.noSuchFile {
            throw StorageError(.storeNotFound, "no token cache at \(directory)")
        } catch let error as LMDBError where error == LMDBError(code: EEXIST) || error == LMDBError(code: ENOTEMPTY) {
            throw StorageError(.invalidArgument, "\(target) already exists; nothing was moved")
        } catch let error as LMDBError {
            throw StorageError(error, directory: directory)
        } catch {
            throw StorageError(.ioFailure, "moving \(directory) aside failed: \(type(of: error))")
        }
    }

    /// Says who has the store open and what to do: stop that program (named by its command line), then retry.
    private static func describe(_ inUse: StoreInUse, directory: String, doing: String = "compacting", retry: String = "compact") -> String {
        if inUse.isThisProcess {
            return "the store at \(directory) is open in this process; close it before \(doing). Nothing was changed"
        }
        let who = switch (inUse.pid, inUse.command) {
        case let (pid?, command?): "process \(pid) (\(command))"
        case let (pid?, nil): "process \(pid)"
        default: "another process"
        }
        return "the store at \(directory) is open in \(who); stop it, then \(retry) again. Nothing was changed"
    }
}
