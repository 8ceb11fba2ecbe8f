import Foundation
internal import TokenCache
#if canImport(Glibc)
import Glibc
#endif

/// Where a salvage stands, kept in `salvage.progress` in its target directory while it runs: the position up to
/// which copied records are committed, the key range being read, the ranges the last restart skipped, whether the
/// last run ended by crashing in the range it was reading, and what was lost before the committed position.
/// Plaintext, no secret: ten 32-bit big-endian numbers (database index in ``KeySpace`` and two-byte prefix,
/// committed; database and prefix being read; database, first prefix and count skipped; crashed, 1 or 0; unreadable
/// ranges and damaged records before the committed position; all ones for "none"). A file of the first seven numbers
/// alone (from an earlier version) reads as not crashed, with nothing lost. Written in place without fsync, before
/// every range, since it only has to survive the salvaging process, not the machine.
///
/// A run that ends while reading a range leaves `reading` set, whatever ended it. Only a crash of the reading itself
/// (LMDB has no checksums, and some damaged pages make it read outside its map or fail an assertion) is a reason to
/// skip the range: whoever saw the crash (`cachetool salvage`'s parent process, from its child's signal) records it
/// with ``TokenStore/recordSalvageCrash(in:)``, and the next run skips the range. A run that was killed, interrupted
/// or lost with the machine reads the range again, so that nothing that can be read is ever skipped. A damaged page
/// spans many ranges, so a crash right after a skip doubles the next skip (up to 1,024 ranges): a page costs a few
/// restarts, at the price of up to as many readable ranges again after it.
struct SalvageProgress {
    typealias Position = (database: Int, prefix: Int)

    /// Database index and the first prefix not yet committed.
    var committed: Position
    /// Database index and prefix being read, if any.
    var reading: Position?
    /// The ranges the last restart skipped: database, first prefix, count.
    var skipped: (database: Int, prefix: Int, count: Int)?
    /// Whether the run that left this file crashed while reading `reading`.
    var crashed = false
    /// Key ranges that could not be read, before `committed`.
    var unreadableRanges = 0
    /// Records that did not authenticate or decode, before `committed`.
    var damagedRecords = 0

    static let fileName = "salvage.progress"
    static let largestSkip = 1_024

    var bytes: [UInt8] {
        let numbers = [committed.database, committed.prefix, reading?.database ?? -1, reading?.prefix ?? -1,
                       skipped?.database ?? -1, skipped?.prefix ?? -1, skipped?.count ?? -1, crashed ? 1 : 0,
                       unreadableRanges, damagedRecords]
        return numbers.flatMap { number in withUnsafeBytes(of: UInt32(truncatingIfNeeded: number).bigEndian, Array.init) }
    }

    init(committed: Position, reading: Position?, skipped: (database: Int, prefix: Int, count: Int)? = nil, crashed: Bool = false) {
        self.committed = committed
        self.reading = reading
        self.skipped = skipped
        self.crashed = crashed
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count == 28 || bytes.count == 40 else { return nil }
        let numbers = (0..<bytes.count / 4).map { index in bytes[index * 4..<index * 4 + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        committed = (Int(numbers[0]), Int(numbers[1]))
        reading = numbers[2] == .max ? nil : (Int(numbers[2]), Int(numbers[3]))
        skipped = numbers[4] == .max ? nil : (Int(numbers[4]), Int(numbers[5]), Int(numbers[6]))
        if numbers.count == 10 {
            crashed = numbers[7] == 1
            unreadableRanges = Int(numbers[8])
            damagedRecords = Int(numbers[9])
        }
    }

    /// The range to skip on resuming: the one being read when the last run crashed; none after any other ending.
    var crashedIn: Position? { crashed ? reading : nil }

    /// How many ranges to skip from `crashed`, where the last run crashed: one, or twice the last skip when the crash
    /// came right after it (the same damaged page).
    func skipCount(from crashed: Position) -> Int {
        guard let skipped, skipped.database == crashed.database, skipped.prefix + skipped.count == crashed.prefix else { return 1 }
        return min(skipped.count * 2, Self.largestSkip)
    }
}

extension SalvageProgress {
    /// `salvage.progress` in a salvage's directory, open for writing in place: the one place its bytes are read and
    /// written. A file the library keeps beside the store it writes, not one of that store's (the backend never sees
    /// it): it must outlive the salvaging process, whatever ends it, and a crash of that process is why it exists.
    final class File {
        let path: String
        private let descriptor: Int32

        /// Opens the progress file in `directory`, creating it (mode 0600) when `creating`.
        /// - Throws: ``TokenCacheError`` `.ioFailure` naming the path and the system's reason.
        init(in directory: String, creating: Bool) throws(TokenCacheError) {
            path = Self.path(in: directory)
            descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (creating ? O_CREAT : 0), 0o600)
            guard descriptor >= 0 else { throw TokenCacheError(.ioFailure, "cannot write \(path): \(FileSystem.describe(errno))") }
        }

        deinit { close(descriptor) }

        /// Writes `state` over the file's start, without fsync (see ``SalvageProgress``); false when it could not.
        @discardableResult
        func save(_ state: SalvageProgress) -> Bool {
            let bytes = state.bytes
            return pwrite(descriptor, bytes, bytes.count, 0) == bytes.count
        }

        static func path(in directory: String) -> String { directory + "/" + SalvageProgress.fileName }

        /// The progress saved in `directory`, or nil when there is none (or it is not a progress file).
        static func load(in directory: String) -> SalvageProgress? {
            FileManager.default.contents(atPath: path(in: directory)).flatMap { SalvageProgress(Array($0)) }
        }

        /// Removes the progress file of a salvage that finished.
        static func remove(in directory: String) { unlink(path(in: directory)) }
    }
}
