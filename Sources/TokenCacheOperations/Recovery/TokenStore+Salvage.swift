import Foundation
public import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

/// What ``TokenStore/salvage(_:into:progress:)`` copied.
public struct SalvageReport: Sendable, Equatable {
    /// The new store, which the same key opens.
    public var directory = ""
    /// Readable records copied, by kind.
    public var salvaged: [EntityKind: Int] = [:]
    /// Records that were read but did not authenticate or decode (left behind), by the earlier runs this one
    /// continued too.
    public var damagedRecords = 0
    /// Key ranges (each 1/65,536 of a database) whose B-tree pages could not be read: their records are lost. The
    /// earlier runs this one continued included.
    public var unreadableRanges = 0
    /// Whether this call continued a salvage into `directory` that an earlier one (or a crash) left unfinished.
    public var resumed = false

    public init() {}
}

extension TokenStore {
    /// Key prefixes a database is read by: each prefix in its own read transaction, so that a damaged page costs
    /// only the ranges whose path goes through it.
    static let salvagePrefixes = 1 << 16
    /// Records copied per write transaction of the new store.
    static let salvageBatch = 4_096

    /// Copies every record that can still be read and authenticated from a damaged store into a new store in
    /// `directory`, which the same key opens: for a store that opens but has damaged B-tree pages, when there is no
    /// backup. The new store gets the old header as it is (the same store id and data keys), so records are copied
    /// sealed, without being decrypted again for writing; each is authenticated first, and damaged ones are left.
    ///
    /// Each database is read in 65,536 key ranges, each in its own transaction: a damaged page loses the records
    /// of the ranges that pass through it, not the rest. A salvage that ends before it is done (killed, interrupted,
    /// or crashed) continues when run again with the same `directory`, from its last commit, and reads again the
    /// range it was reading: nothing readable is skipped. Some damaged pages make LMDB crash the process (it has no
    /// checksums); a caller that sees that crash records it with ``recordSalvageCrash(in:)``, and the salvage run
    /// again skips that range (`cachetool salvage` reads in a child process and does this by itself).
    ///
    /// `directory` is checked before anything is copied, and held exclusively while the salvage writes it (a second
    /// salvage into it meanwhile gets `.storeInUse`, naming this one's pid).
    ///
    /// Nothing is written to the damaged store. Afterwards the new store is a complete store: stop the programs that
    /// use the old one, move it aside (``quarantine(_:force:)``) and move the new one into its place.
    /// - Parameters:
    ///   - configuration: The damaged store and its key (opened read-only).
    ///   - directory: A new directory (created, mode 0700, with missing parents) or an empty one owned by this user and
    ///     closed to others, outside the store; or one an unfinished salvage of the same store left.
    ///   - progress: Called now and then with the records read so far.
    /// - Throws: ``TokenCacheError``: the errors of ``open(_:)`` (a store whose header cannot be read cannot be
    ///   salvaged: the keys are in it); `.invalidArgument` when `directory` is a file, the store or inside it, or
    ///   holds something else; `.storeAlreadyExists` when it holds a store and no unfinished salvage;
    ///   `.insecurePermissions` when it is open to other users; `.storeInUse` when another salvage is writing it;
    ///   the errors of writing the new store.
    public static func salvage(_ configuration: Configuration, into directory: String, progress: ((Int) -> Void)? = nil) throws -> SalvageReport {
        var readOnly = configuration
        readOnly.readOnly = true
        let source = try TokenStore.open(readOnly).store
        var report = SalvageReport()
        report.directory = directory
        try checkSalvageDirectory(directory, store: source.directory)
        try FileSystem.makeDirectory(directory)
        // Held to the end of this scope (a noncopyable value's lifetime is its scope), whatever ends it.
        let lock = try SalvageLock.acquire(directory: directory)
        var state = SalvageProgress(committed: (0, 0), reading: nil)
        if let saved = try salvageProgress(in: directory, configuration: configuration) {
            state = saved
            report.resumed = true
            report.unreadableRanges = saved.unreadableRanges
            report.damagedRecords = saved.damagedRecords
        }
        let crashedIn = state.crashedIn
        state.crashed = false
        let target = try salvageTarget(directory, header: source.keyring.header.encoded(), configuration: configuration)
        let progressFile = try SalvageProgress.File(in: directory, creating: true)
        // Best effort: a progress file that could not be written costs a restart its resumption, not records.
        func save(_ state: SalvageProgress) { progressFile.save(state) }
        if report.resumed {
            for kind in EntityKind.allCases { report.salvaged[kind] = try target.read { try $0.count(in: KeySpace(kind)) } }
        }

        var skipUntil: SalvageProgress.Position? = nil
        var pending: [(database: KeySpace, key: [UInt8], value: [UInt8])] = []
        var read = 0
        var readSinceRelease = 0
        // Everything before `position` is read and counted: its records committed, what it lost in the totals saved.
        func commit(upTo position: (database: Int, prefix: Int)) throws {
            try target.write { txn in
                for record in pending { try record.value.withUnsafeBytes { try txn.put(in: record.database, key: record.key, value: $0) } }
            }
            for kind in EntityKind.allCases {
                let database = KeySpace(kind)
                report.salvaged[kind, default: 0] += pending.count { $0.database == database }
            }
            pending.removeAll(keepingCapacity: true)
            state.committed = position
            state.reading = nil
            state.unreadableRanges = report.unreadableRanges
            state.damagedRecords = report.damagedRecords
            save(state)
        }
        for (databaseIndex, database) in KeySpace.allCases.enumerated() where databaseIndex >= state.committed.database {
            let firstPrefix = databaseIndex == state.committed.database ? state.committed.prefix : 0
            if database == KeySpace.meta {
                // The sealed meta records and the cursors; the header is already there.
                try source.backend.read { txn in
                    try txn.forEach(in: database, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                        if !key.elementsEqual(FormatConstants.headerKey) { pending.append((database, Array(key), Array(value))) }
                        return true
                    } } }
                }
                try commit(upTo: (databaseIndex + 1, 0))
                continue
            }
            for prefix in firstPrefix..<salvagePrefixes {
                if let crashedIn, crashedIn == (databaseIndex, prefix) {
                    let until = min(prefix + state.skipCount(from: crashedIn), salvagePrefixes)
                    skipUntil = (databaseIndex, until)
                    state.skipped = (databaseIndex, prefix, until - prefix)
                    report.unreadableRanges += until - prefix
                    // Committed past the skip, so that a later restart never reads these ranges again.
                    try commit(upTo: (databaseIndex, until))
                }
                if let skipUntil, skipUntil.database == databaseIndex, prefix < skipUntil.prefix { continue }
                state.reading = (databaseIndex, prefix)
                save(state)
                do {
                    try source.backend.read { txn in
                        try txn.forEach(in: database, prefix: [UInt8(prefix >> 8), UInt8(prefix & 0xFF)]) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                            read += 1
                            readSinceRelease += 1
                            if source.authenticates(database: database, key: key, value: value) {
                                pending.append((database, Array(key), Array(value)))
                            } else {
                                report.damagedRecords += 1
                            }
                            return true
                        } } }
                        if readSinceRelease >= 4_096 {
                            source.releaseScannedPages(in: txn)
                            readSinceRelease = 0
                        }
                    }
                } catch {
                    report.unreadableRanges += 1
                }
                progress?(read)
                if pending.count >= salvageBatch { try commit(upTo: (databaseIndex, prefix + 1)) }
            }
            try commit(upTo: (databaseIndex + 1, 0))
        }
        SalvageProgress.File.remove(in: directory)
        _ = consume lock
        return report
    }

    /// Records that the salvage into `directory` crashed while reading the key range its progress names, so that the
    /// salvage run again skips that range. Only for a crash of the reading itself, seen by the caller (the process that
    /// ran the salvage died of SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT): a salvage that was killed or interrupted
    /// must read that range again, which it does unless this is called.
    /// - Returns: Whether a range was marked: false when the salvage was not reading one (it crashed elsewhere, or
    ///   finished).
    /// - Throws: ``TokenCacheError``: `.storeInUse` when a salvage is writing `directory` again; `.ioFailure`.
    @discardableResult
    public static func recordSalvageCrash(in directory: String) throws -> Bool {
        let lock = try SalvageLock.acquire(directory: directory)
        guard var state = SalvageProgress.File.load(in: directory), state.reading != nil else { return false }
        state.crashed = true
        let file = try SalvageProgress.File(in: directory, creating: false)
        guard file.save(state) else { throw TokenCacheError(.ioFailure, "cannot write \(file.path): \(FileSystem.describe(errno))") }
        _ = consume lock
        return true
    }

    /// The checks a salvage's directory passes before anything is written: a directory (or nothing yet), not the
    /// store nor inside it, and, when it exists, this user's and closed to others (as the new store must be).
    private static func checkSalvageDirectory(_ directory: String, store: String) throws {
        switch FileSystem.placement(of: directory, relativeTo: store) {
        case .same: throw TokenCacheError(.invalidArgument, "\(directory) is the store itself: salvage it into a new directory")
        case .inside: throw TokenCacheError(.invalidArgument, "\(directory) is inside the store: salvage it into a directory outside \(store)")
        case .outside: break
        }
        guard FileSystem.exists(directory) else { return }
        guard FileSystem.isDirectory(directory) else { throw TokenCacheError(.invalidArgument, "\(directory) is a file, not a directory") }
        try FileSystem.checkPrivate(directory, what: "salvage directory", fix: "chmod 700 \(directory)")
    }

    /// The progress an unfinished salvage left in `directory`, or nil for an empty directory (the lock file aside).
    /// - Throws: ``TokenCacheError`` when `directory` holds anything else: `.storeAlreadyExists` for a store (a
    ///   finished salvage, say), `.invalidArgument` otherwise.
    private static func salvageProgress(in directory: String, configuration: Configuration) throws -> SalvageProgress? {
        if let saved = SalvageProgress.File.load(in: directory) { return saved }
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0 != SalvageLock.fileName }
        if entries.isEmpty { return nil }
        if configuration.storage.relocated(to: directory).holdsStore() {
            throw TokenCacheError(
                .storeAlreadyExists,
                "\(directory) already holds a store and no unfinished salvage (a finished one verifies: `verify` it); nothing was written"
            )
        }
        throw TokenCacheError(.invalidArgument, "\(directory) is not empty (and holds no unfinished salvage); nothing was written")
    }

    /// The new store's backend, of the damaged store's kind in `directory`, with the old header in place.
    private static func salvageTarget(_ directory: String, header: [UInt8], configuration: Configuration) throws -> any RecordBackend {
        do {
            let backend = try configuration.storage.relocated(to: directory).open(readOnly: false, create: true)
            try backend.write { txn in
                if let stored = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey, { $0.withUnsafeBytes { Array($0) } }) {
                    guard stored == header else {
                        throw TokenCacheError(.invalidArgument, "\(directory) holds a salvage of another store; nothing was written")
                    }
                    return
                }
                try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            }
            return backend
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
    }
}

extension RecordStore {
    /// Whether the record stored under `key` in `database` authenticates and decodes as its kind.
    func authenticates(database: KeySpace, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        let key = Array(key)
        switch database {
        case KeySpace.accounts: if case .success = decode(Account.self, value: value, key: key) { return true }
        case KeySpace.accessTokens: if case .success = decode(AccessToken.self, value: value, key: key) { return true }
        case KeySpace.refreshTokens: if case .success = decode(RefreshToken.self, value: value, key: key) { return true }
        case KeySpace.idTokens: if case .success = decode(IDToken.self, value: value, key: key) { return true }
        case KeySpace.appMetadata: if case .success = decode(AppMetadata.self, value: value, key: key) { return true }
        default: return false
        }
        return false
    }
}
