#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
package import TokenCacheStorage
package import TokenCacheRecords

/// The highest revision this host has read under each key of a shared store: how a host notices a server that hands
/// it an older row (FORMAT.md §2.2, "Rollback").
///
/// A record is authenticated with its key and key space (§5.2) but not with how recent it is, so a server (or a
/// standby promoted behind its primary, or a restored backup) can return an older sealed value that opens cleanly.
/// Its revision, sealed in the body (§5.3), gives it away to a host that has read a newer one: every body opened on a
/// shared store is checked here, and one below the mark is refused as a damaged record is, with a message that says
/// why. Records of `meta` are not checked: leases and the cap are rewritten at revision 1 by design.
///
/// Marks rise only from reads of committed data (a read transaction, a lookup's fetch), never from a write
/// transaction's reads, which may see the transaction's own writes and then roll back: a mark raised from those would
/// refuse the committed record the retry reads. What stays undetectable is stated in FORMAT.md: a row hidden (read as
/// absent), a rollback of a key this host has not read since it started, and one past a mark this table dropped.
package final class RevisionMarks: Sendable {
    /// How many keys are remembered: about 100 bytes each. Past it, an arbitrary mark is dropped for each new one
    /// (its key loses detection until read again), so the memory a long-running host spends is bounded.
    package static let capacity = 1 << 18

    private struct Mark: Hashable {
        var space: UInt8
        var key: [UInt8]
    }

    private let marks = Mutex<[Mark: UInt64]>([:])

    package init() {}

    /// Refuses `revision` of the record under `key` in `space` when this host has read a higher one there; raises the
    /// mark when the caller reads committed data (``readingCommitted(_:)``).
    /// - Throws: ``FormatError`` naming both revisions: the record is treated as damaged, never served.
    package func check(_ revision: UInt64, space: KeySpace, key: UnsafeRawBufferPointer) throws(FormatError) {
        guard space != .meta else { return }
        let raising = Self.isReadingCommitted
        let seen = marks.withLock { marks -> UInt64? in
            let mark = Mark(space: UInt8(space.rawValue), key: Array(key))
            let seen = marks[mark]
            if raising, revision > seen ?? 0 {
                if seen == nil, marks.count >= Self.capacity { marks.remove(at: marks.startIndex) }
                marks[mark] = revision
            }
            return seen
        }
        if let seen, revision < seen {
            throw FormatError(
                "rolled back: the server returned revision \(revision) of this record, below revision \(seen) this host already read"
            )
        }
    }

    /// How many keys have a mark (for tests and statistics).
    package var count: Int { marks.withLock { $0.count } }

    // MARK: Committed reads

    /// Runs `body` as a read of committed data on this thread: checks in it raise marks. Nested calls are fine.
    package static func readingCommitted<R>(_ body: () throws -> R) rethrows -> R {
        try scoped(committed: true, body)
    }

    /// Runs `body` as a write transaction's reads on this thread: checks in it raise no mark, even inside a read.
    package static func writing<R>(_ body: () throws -> R) rethrows -> R {
        try scoped(committed: false, body)
    }

    private static func scoped<R>(committed: Bool, _ body: () throws -> R) rethrows -> R {
        let previous = pthread_getspecific(threadFlag)
        pthread_setspecific(threadFlag, committed ? UnsafeRawPointer(bitPattern: 1) : nil)
        defer { pthread_setspecific(threadFlag, previous) }
        return try body()
    }

    private static var isReadingCommitted: Bool { pthread_getspecific(threadFlag) != nil }

    /// The thread-specific flag of ``readingCommitted(_:)``: set only for the duration of one synchronous read, which
    /// runs on one thread (a transaction's closure never suspends).
    private static let threadFlag: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left for the revision marks")
        return key
    }()
}
