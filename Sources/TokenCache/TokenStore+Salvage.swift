import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import TokenCacheStorage
internal import TokenCacheRecords

/// What ``TokenStore/salvage(_:into:progress:)`` copied.
public struct SalvageReport: Sendable, Equatable {
    /// The new store, which the same key opens.
    public var directory = ""
    /// Readable records copied, by kind.
    public var salvaged: [EntityKind: Int] = [:]
    /// Records that were read but did not authenticate or decode (left behind).
    public var damagedRecords = 0
    /// Key ranges (each 1/65,536 of a database) whose B-tree pages could not be read: their records are lost.
    public var unreadableRanges = 0
    /// Whether this call continued a salvage into `directory` that an earlier one (or a crash) left unfinished.
    public var resumed = false

    public init() {}
}

/// Where a salvage stands, kept in `salvage.progress` in its target directory while it runs: the position up to
/// which copied records are committed, the key range being read, and the ranges the last restart skipped. Plaintext,
/// no secret: seven 32-bit big-endian numbers (database index in ``DatabaseName/all`` and two-byte prefix, committed;
/// database and prefix being read; database, first prefix and count skipped; all ones for "none"). Written in place
/// without fsync, before every range, since it only has to survive the salvaging process, not the machine: LMDB
/// crashes on some damaged pages (it has no checksums), and a salvage run again skips the range the crash happened
/// in. A damaged page spans many ranges, so a crash right after a skip doubles the next skip (up to 1,024 ranges):
/// a page costs a few restarts, at the price of up to as many readable ranges again after it.
struct SalvageProgress {
    typealias Position = (database: Int, prefix: Int)

    /// Database index and the first prefix not yet committed.
    var committed: Position
    /// Database index and prefix being read, if any.
    var reading: Position?
    /// The ranges the last restart skipped: database, first prefix, count.
    var skipped: (database: Int, prefix: Int, count: Int)?

    static let fileName = "salvage.progress"
    static let largestSkip = 1_024

    var bytes: [UInt8] {
        let numbers = [committed.database, committed.prefix, reading?.database ?? -1, reading?.prefix ?? -1,
                       skipped?.database ?? -1, skipped?.prefix ?? -1, skipped?.count ?? -1]
        return numbers.flatMap { number in withUnsafeBytes(of: UInt32(truncatingIfNeeded: number).bigEndian, Array.init) }
    }

    init(committed: Position, reading: Position?, skipped: (database: Int, prefix: Int, count: Int)? = nil) {
        self.committed = committed
        self.reading = reading
        self.skipped = skipped
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count == 28 else { return nil }
        let numbers = (0..<7).map { index in bytes[index * 4..<index * 4 + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        committed = (Int(numbers[0]), Int(numbers[1]))
        reading = numbers[2] == .max ? nil : (Int(numbers[2]), Int(numbers[3]))
        skipped = numbers[4] == .max ? nil : (Int(numbers[4]), Int(numbers[5]), Int(numbers[6]))
    }

    /// How many ranges to skip from `crashed`, where the last run crashed: one, or twice the last skip when the crash
    /// came right after it (the same damaged page).
    func skipCount(from crashed: Position) -> Int {
        guard let skipped, skipped.database == crashed.database, skipped.prefix + skipped.count == crashed.prefix else { return 1 }
        return min(skipped.count * 2, Self.largestSkip)
    }
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
    /// of the ranges that pass through it, not the rest. Some damaged pages make LMDB crash the process (it has no
    /// checksums); a salvage then run again with the same `directory` continues where it stopped and skips the range
    /// it crashed in (`cachetool salvage` does this by itself).
    ///
    /// Nothing is written to the damaged store. Afterwards the new store is a complete store: stop the programs that
    /// use the old one, move it aside (``quarantine(_:force:)``) and move the new one into its place.
    /// - Parameters:
    ///   - configuration: The damaged store and its key (opened read-only).
    ///   - directory: A new or empty directory, or one an unfinished salvage of the same store left.
    ///   - progress: Called now and then with the records read so far.
    /// - Throws: ``TokenCacheError``: the errors of ``open(_:)`` (a store whose header cannot be read cannot be
    ///   salvaged: the keys are in it); `.invalidArgument` when `directory` holds something else; the errors of
    ///   writing the new store.
    public static func salvage(_ configuration: Configuration, into directory: String, progress: ((Int) -> Void)? = nil) throws -> SalvageReport {
        var readOnly = configuration
        readOnly.readOnly = true
        let source = try TokenStore.open(readOnly).store
        var report = SalvageReport()
        report.directory = directory
        let progressPath = directory + "/" + SalvageProgress.fileName
        var state = SalvageProgress(committed: (0, 0), reading: nil)
        if let data = FileManager.default.contents(atPath: progressPath), let saved = SalvageProgress(Array(data)) {
            state = saved
            report.resumed = true
        } else {
            try prepareSalvageDirectory(directory)
        }
        let crashedIn = report.resumed ? state.reading : nil
        let target = try salvageTarget(directory, header: source.keyring.header.encoded(), configuration: configuration)
        let progressFile = Glibc.open(progressPath, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard progressFile >= 0 else { throw TokenCacheError(.ioFailure, "cannot write \(progressPath) (errno \(errno))") }
        defer { close(progressFile) }
        func save(_ state: SalvageProgress) {
            _ = state.bytes.withUnsafeBytes { pwrite(progressFile, $0.baseAddress, $0.count, 0) }
        }
        if report.resumed {
            for kind in EntityKind.allCases { report.salvaged[kind] = try target.read { try $0.count(in: DatabaseName.forKind(kind)) } }
        }

        var skipUntil: SalvageProgress.Position? = nil
        var pending: [(database: String, key: [UInt8], value: [UInt8])] = []
        var read = 0
        var readSinceRelease = 0
        func commit(upTo position: (database: Int, prefix: Int)) throws {
            try target.write { txn in
                for record in pending { try record.value.withUnsafeBytes { try txn.put(in: record.database, key: record.key, value: $0) } }
            }
            for kind in EntityKind.allCases {
                let database = DatabaseName.forKind(kind)
                report.salvaged[kind, default: 0] += pending.count { $0.database == database }
            }
            pending.removeAll(keepingCapacity: true)
            state.committed = position
            state.reading = nil
            save(state)
        }
        for (databaseIndex, database) in DatabaseName.all.enumerated() where databaseIndex >= state.committed.database {
            let firstPrefix = databaseIndex == state.committed.database ? state.committed.prefix : 0
            if database == DatabaseName.meta {
                // The sealed meta records and the cursors; the header is already there.
                try source.backend.read { txn in
                    try txn.forEach(in: database, prefix: []) { key, value in
                        if !key.elementsEqual(FormatConstants.headerKey) { pending.append((database, Array(key), Array(value))) }
                        return true
                    }
                }
                try commit(upTo: (databaseIndex + 1, 0))
                continue
            }
            for prefix in firstPrefix..<salvagePrefixes {
                if let crashedIn, crashedIn == (databaseIndex, prefix) {
                    let until = min(prefix + state.skipCount(from: crashedIn), salvagePrefixes)
                    skipUntil = (databaseIndex, until)
                    state.skipped = (databaseIndex, prefix, until - prefix)
                    // Committed past the skip, so that a later restart never reads these ranges again.
                    try commit(upTo: (databaseIndex, until))
                }
                if let skipUntil, skipUntil.database == databaseIndex, prefix < skipUntil.prefix {
                    report.unreadableRanges += 1
                    continue
                }
                state.reading = (databaseIndex, prefix)
                save(state)
                do {
                    try source.backend.read { txn in
                        try txn.forEach(in: database, prefix: [UInt8(prefix >> 8), UInt8(prefix & 0xFF)]) { key, value in
                            read += 1
                            readSinceRelease += 1
                            if source.authenticates(database: database, key: key, value: value) {
                                pending.append((database, Array(key), Array(value)))
                            } else {
                                report.damagedRecords += 1
                            }
                            return true
                        }
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
        unlink(progressPath)
        return report
    }

    /// The directory a salvage writes to must be new or empty.
    private static func prepareSalvageDirectory(_ directory: String) throws {
        if FileSystem.exists(directory) {
            guard FileSystem.isDirectory(directory) else { throw TokenCacheError(.invalidArgument, "\(directory) is a file, not a directory") }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            guard entries.isEmpty else {
                throw TokenCacheError(.invalidArgument, "\(directory) is not empty (and holds no unfinished salvage); nothing was written")
            }
        }
        try FileSystem.makeDirectory(directory)
    }

    /// The new store's backend, with the old header in place.
    private static func salvageTarget(_ directory: String, header: [UInt8], configuration: Configuration) throws -> LMDBRecordBackend {
        var options = LMDBRecordBackend.Options(
            directory: directory, initialMapSize: configuration.initialMapSize, maximumMapSize: configuration.maximumMapSize,
            readOnly: false, allowNetworkFilesystem: configuration.allowNetworkFilesystem
        )
        options.reservedMapSize = configuration.reservedMapSize
        do {
            let backend = try LMDBRecordBackend.open(options, spaces: DatabaseName.all)
            try backend.write { txn in
                if let stored = try txn.withValue(in: DatabaseName.meta, forKey: FormatConstants.headerKey, { Array($0) }) {
                    guard stored == header else {
                        throw TokenCacheError(.invalidArgument, "\(directory) holds a salvage of another store; nothing was written")
                    }
                    return
                }
                try header.withUnsafeBytes { try txn.put(in: DatabaseName.meta, key: FormatConstants.headerKey, value: $0) }
            }
            return backend
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
    }
}

extension RecordStore {
    /// Whether the record stored under `key` in `database` authenticates and decodes as its kind.
    func authenticates(database: String, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        let key = Array(key)
        switch database {
        case DatabaseName.accounts: if case .success = decode(Account.self, value: value, key: key) { return true }
        case DatabaseName.accessTokens: if case .success = decode(AccessToken.self, value: value, key: key) { return true }
        case DatabaseName.refreshTokens: if case .success = decode(RefreshToken.self, value: value, key: key) { return true }
        case DatabaseName.idTokens: if case .success = decode(IDToken.self, value: value, key: key) { return true }
        case DatabaseName.appMetadata: if case .success = decode(AppMetadata.self, value: value, key: key) { return true }
        default: return false
        }
        return false
    }
}
