import Foundation
public import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

/// What ``TokenStore/copy(to:replacing:progress:)`` wrote.
public struct CopyReport: Sendable {
    /// The copy's location, without a password.
    public var destination: String
    /// The records of each kind in the copy, read back from it through the key.
    public var recordCounts: [EntityKind: Int]
    /// The `meta` records copied: the header, and the sealed records and cursors beside it.
    public var metaRecords: Int
    /// Refresh leases left behind: a lease is a process's claim on a redemption in the source, not data.
    public var leasesLeftBehind: Int
    /// Records the destination held before, removed because the copy was told to replace them.
    public var replacedRecords: Int
    /// How long the copy took, in seconds.
    public var duration: Double
}

extension TokenStore {
    /// Copies every record of this store, sealed as it is, into the store at `destination`: a directory or a shared
    /// store, of either kind whatever this one's is, so that a directory's records move to a server and a server's come
    /// down to a directory (a local backup of a shared store).
    ///
    /// The copy takes this store's header as it is (its store id and wrapped data keys): records are copied as stored,
    /// never sealed again, and the key that opens this store opens the copy. Into a shared store, each record's
    /// revision is read (an authenticated open of its body), so that its revision floor is raised past the highest
    /// copied. (A record's associated data
    /// names the store id, its key space and its key, FORMAT.md §5.2, none of which the copy changes; a lone access
    /// token under its bucket prefix on a directory or under its own key on a server is where either kind reads it,
    /// §4.3.) Refresh leases are left behind: they are claims of this store's processes, timed by its clock.
    ///
    /// The copy is one snapshot of this store (one read transaction), written 256 records per transaction of
    /// the destination, so that no transaction grows with the store; the header goes last. A copy that fails part way
    /// (killed, the server gone) leaves a destination without a header, which no key opens as a store, never one that
    /// looks complete: copy again with `replacing`. Every statement on a server is bounded by its store's timeout.
    /// Before returning, the copy is opened through `destination`'s key and its records counted.
    ///
    /// - Parameters:
    ///   - destination: Where to copy to, with the key that opens it (the same as this store's, for the copy to open).
    ///     A directory is created (mode 0700) when missing; an existing one must be closed to other users.
    ///   - replacing: Whether records the destination holds (a store made by `init`, an earlier copy) are removed
    ///     first (its header first of all). Without it a destination that holds any record is refused.
    ///   - progress: Called now and then with the records copied so far.
    /// - Throws: ``TokenCacheError``: `.storeAlreadyExists` when the destination holds records and `replacing` is
    ///   false (nothing was written); `.invalidArgument` when it is this store, inside this store's directory, or a
    ///   file; `.insecurePermissions` for a directory open to others; `.wrongKey` when the destination's key does not
    ///   open the copy; the errors of reading this store and writing the destination.
    public func copy(to destination: Configuration, replacing: Bool = false, progress: ((Int) -> Void)? = nil) throws -> CopyReport {
        let started = Date()
        let target = destination.storage
        let source = configuration.storage
        do {
            if target.location == source.location {
                throw TokenCacheError(.invalidArgument, "\(target.location) is the store itself: copy it somewhere else; nothing was written")
            }
            if let directory = target.directory {
                if let own = source.directory, FileSystem.placement(of: directory, relativeTo: own) != .outside {
                    throw TokenCacheError(.invalidArgument, "\(directory) is inside the store's own directory: copy it somewhere else; nothing was written")
                }
                if FileSystem.exists(directory) {
                    guard FileSystem.isDirectory(directory) else {
                        throw TokenCacheError(.invalidArgument, "\(directory) is a file, not a directory: a store is a directory")
                    }
                    try FileSystem.checkPrivate(directory, what: "copy's directory", fix: "chmod 700 \(directory)")
                } else {
                    try FileSystem.makeDirectory(directory)
                }
            }
            let backend = try target.open(readOnly: false, create: true)
            let held = try backend.read { txn in try KeySpace.allCases.reduce(0) { $0 + (try txn.count(in: $1)) } }
            if held > 0, !replacing {
                throw TokenCacheError(
                    .storeAlreadyExists,
                    "\(target.location) already holds \(held) record\(held == 1 ? "" : "s"); nothing was written (replace them with --replace)"
                )
            }
            if replacing { try Self.removeEverything(from: backend) }
            var meta = 0, leases = 0, copied = 0
            // The highest revision copied, read only for a destination with a revision floor (a shared store), which
            // must pass it (FORMAT.md §2.2); a directory needs no record opened.
            let floor = backend as? any RevisionFloorKeeping
            var highestRevision: UInt64 = 0
            var header: [UInt8]? = nil
            var pending: [(space: KeySpace, key: [UInt8], value: [UInt8])] = []
            func flush() throws {
                guard !pending.isEmpty else { return }
                // Run again as a whole if a shared store's transaction loses to a concurrent one.
                try backend.write(freeingSpace: false) { destination in
                    for record in pending { try record.value.withUnsafeBytes { try destination.put(in: record.space, key: record.key, value: $0) } }
                }
                copied += pending.count
                pending.removeAll(keepingCapacity: true)
                progress?(copied)
            }
            try store.backend.read { reader in
                for space in KeySpace.allCases {
                    try reader.forEach(in: space, prefix: []) { key, value in try key.withUnsafeBytes { key in try value.withUnsafeBytes { value in
                        if space == KeySpace.meta {
                            if RecordStore.isRefreshLeaseKey(key) {
                                leases += 1
                                return true
                            }
                            meta += 1
                            if key.elementsEqual(FormatConstants.headerKey) {
                                header = Array(value)
                                return true
                            }
                        }
                        if floor != nil, space != KeySpace.meta, let revision = try? store.openRevision(value, in: space, key: Array(key)) {
                            highestRevision = max(highestRevision, revision)
                        }
                        pending.append((space, Array(key), Array(value)))
                        if pending.count >= Self.copyBatch { try flush() }
                        return true
                    } } }
                }
                try flush()
            }
            guard let header else { throw TokenCacheError(.corruptStore, "the store has no header to copy") }
            try floor?.raiseRevisionFloor(to: highestRevision)
            // Last: until the header is there, the destination is no store any key opens.
            try backend.write(freeingSpace: false) { destination in
                try header.withUnsafeBytes { try destination.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            }
            let counts = try readBackCopy(destination)
            return CopyReport(
                destination: target.location, recordCounts: counts, metaRecords: meta, leasesLeftBehind: leases, replacedRecords: replacing ? held : 0,
                duration: Date().timeIntervalSince(started)
            )
        } catch { throw TokenCacheError.wrap(error, directory: target.location) }
    }

    /// Records written per transaction of the destination: few enough that a directory's transaction stays far below
    /// LMDB's limit on the pages one transaction may dirty, and that a shared source's snapshot, read meanwhile, is not
    /// left idle for long (its server ends a transaction idle for twice the store's timeout).
    static let copyBatch = 256

    /// Removes every record of `backend`, the header first (so that what is left is no store any key opens), then the
    /// rest a batch per transaction.
    private static func removeEverything(from backend: any RecordBackend) throws {
        try backend.write(freeingSpace: true) { destination in _ = try destination.delete(in: KeySpace.meta, key: FormatConstants.headerKey) }
        for space in KeySpace.allCases {
            while true {
                let removed = try backend.write(freeingSpace: true) { destination -> Int in
                    var keys: [[UInt8]] = []
                    try destination.forEach(in: space, prefix: []) { key, _ in
                        key.withUnsafeBytes { keys.append(Array($0)) }
                        return keys.count < copyBatch
                    }
                    for key in keys { _ = try destination.delete(in: space, key: key) }
                    return keys.count
                }
                if removed == 0 { break }
            }
        }
    }

    /// Opens the copy through its configuration (its key), checks that it is this store (same store id) and counts its
    /// records.
    private func readBackCopy(_ destination: Configuration) throws -> [EntityKind: Int] {
        var readOnly = destination
        readOnly.readOnly = true
        let copy = try TokenStore.open(readOnly)
        guard copy.store.keyring.header.storeID == store.keyring.header.storeID else {
            throw TokenCacheError(.corruptStore, "the copy at \(destination.storage.location) does not hold this store's header")
        }
        return try copy.read { try $0.counts() }
    }
}
