import Foundation
public import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

#if canImport(Glibc)
import Glibc
#endif

extension TokenStore {
    /// Writes a consistent, compacted copy of the store into `directory`, while this and other processes go on reading
    /// and writing it. The copy is a store: the same key opens it, and restoring is using it (point the configuration
    /// at it, or move its `data.mdb` into place while no process has the store open).
    ///
    /// The copy is one snapshot (the records of one committed transaction, none of a later one), written with LMDB's
    /// compacting copy, so it carries no free pages. It is written under a temporary name, synced and only then named
    /// `data.mdb`: the directory holds either no store or a complete one. Its files are mode 0600 and the directory
    /// 0700, whatever the umask. Before returning, the copy is opened (read-only) and its header and record counts read
    /// back: the counts reported are the copy's own.
    ///
    /// - Parameters:
    ///   - directory: Where to write the copy: a missing directory (created, mode 0700, with missing parents) or an
    ///     empty one owned by this user and closed to others. Never the store's own directory.
    ///   - progress: Called now and then from another thread with the bytes written so far and an estimate of the total
    ///     (the store's used bytes; a compacted copy is often smaller).
    /// - Returns: What was written: the copy's size and record counts, and how long it took.
    /// - Throws: ``TokenCacheError``: `.storeAlreadyExists` when `directory` already holds a store; `.invalidArgument`
    ///   when it is a file, not empty, or the store itself; `.insecurePermissions` when it is open to other users;
    ///   `.unsupportedEnvironment` for a store whose backend cannot copy itself while in use (in memory: the message
    ///   names the capability; nothing is created); `.storageFull` and `.ioFailure`
    ///   from writing (nothing is left behind then); `.corruptStore` when the copy does not read back as a store.
    public func backup(to directory: String, progress: (@Sendable (_ written: Int, _ estimatedTotal: Int) -> Void)? = nil) throws -> BackupReport {
        let started = Date()
        do {
            let storage = configuration.storage
            // Refused before the destination is made: a kind that cannot copy itself (memory) leaves nothing behind.
            let copying = try store.backend.snapshotCopying(kind: storage.kind)
            let destination = storage.relocated(to: try prepareBackupDirectory(directory, storage: storage))
            let estimate = store.backend.usage().usedBytes
            var relay: (@Sendable (Int) -> Void)? = nil
            if let progress { relay = { written in progress(written, estimate) } }
            let bytes = try copying.copy(to: destination, progress: relay)
            let counts = try readBackBackup(from: destination)
            return BackupReport(
                directory: directory, bytesWritten: bytes, recordCounts: counts, duration: Date().timeIntervalSince(started)
            )
        } catch { throw TokenCacheError.wrap(error, directory: directory) }
    }

    /// Throws `.invalidArgument` when `directory` is, or would be once created, inside the store's own directory: a
    /// copy nested in the live store would be copied into every later backup, and removed with the store.
    package func checkBackupDestinationOutsideStore(_ directory: String) throws {
        if FileSystem.placement(of: directory, relativeTo: store.directory) == .inside { throw Self.insideStore(directory) }
    }

    private static func insideStore(_ directory: String) -> TokenCacheError {
        TokenCacheError(.invalidArgument, "\(directory) is inside the store's own directory: back it up somewhere else; nothing was written")
    }

    /// Creates the destination (0700) or checks that an existing one is empty and private, and that it is neither the
    /// store's own directory nor inside it. Returns it resolved (`realpath`).
    private func prepareBackupDirectory(_ directory: String, storage: any StorageLocation) throws -> String {
        let placement = FileSystem.placement(of: directory, relativeTo: store.directory)
        if placement == .inside { throw Self.insideStore(directory) }
        if FileSystem.exists(directory) {
            guard FileSystem.isDirectory(directory) else {
                throw TokenCacheError(.invalidArgument, "\(directory) is a file, not a directory: a backup is a store directory")
            }
            if placement == .same {
                throw TokenCacheError(.invalidArgument, "\(directory) is the store itself: back it up into another directory")
            }
            if storage.relocated(to: directory).holdsStore() {
                throw TokenCacheError(.storeAlreadyExists, "\(directory) already holds a store; nothing was written (choose a new directory)")
            }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard entries.isEmpty else {
                throw TokenCacheError(
                    .invalidArgument,
                    "\(directory) is not empty (\(entries.count) entr\(entries.count == 1 ? "y" : "ies")); a backup goes into a new or empty directory"
                )
            }
            try FileSystem.checkPrivate(directory, what: "backup directory", fix: "chmod 700 \(directory)")
        } else {
            try FileSystem.makeDirectory(directory)
        }
        return FileSystem.resolvedPath(directory) ?? directory
    }

    /// Opens the copy read-only, as a store would be, and returns its record counts, after checking that it holds this
    /// store's header (same store id, so the key that opens this store opens it).
    private func readBackBackup(from destination: any StorageLocation) throws -> [EntityKind: Int] {
        let directory = destination.location
        let copy = try destination.open(readOnly: true, create: false)
        return try copy.read { txn in
            let header = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { try? StoreHeader.decode(Array($0)) } }
            guard let header = header ?? nil, header.storeID == store.keyring.header.storeID else {
                throw TokenCacheError(.corruptStore, "the copy in \(directory) does not hold this store's header")
            }
            var counts: [EntityKind: Int] = [:]
            for kind in EntityKind.allCases { counts[kind] = try txn.count(in: KeySpace(kind)) }
            return counts
        }
    }
}

/// What ``TokenStore/backup(to:progress:)`` wrote.
public struct BackupReport: Sendable {
    /// The backup's directory, as given.
    public var directory: String
    /// The size of the copy's data file.
    public var bytesWritten: Int
    /// The records of each kind in the copy, read back from it.
    public var recordCounts: [EntityKind: Int]
    /// How long the backup took, in seconds.
    public var duration: Double
}
