import Foundation
public import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

/// What ``TokenStore/quarantine(_:force:)`` did.
public struct QuarantineReport: Sendable {
    /// The store directory, as configured: it now holds a new, empty store.
    public var directory: String
    /// Where the damaged store is now (`DIRECTORY.corrupt-TIMESTAMP`), untouched.
    public var movedTo: String
    /// The damage found; nil when the check was skipped (`force`).
    public var damage: String?
}

extension TokenStore {
    /// Whether the store in `configuration`'s directory is damaged as a whole, beyond what a record-level repair
    /// fixes: it does not open (`.corruptStore`: a bad header, LMDB's `MDB_CORRUPTED` or `MDB_INVALID`), or a walk
    /// over every database's keys meets a damaged B-tree page. LMDB meta pages that disagree do not count: the store
    /// opens at the commit before the newest and is usable. Returns the damage, or nil
    /// when the store opens and its trees are whole (damaged records are then for ``repair(backupTo:progress:)``).
    /// Reads no record's content; needs the key only to open.
    /// - Throws: the errors of ``open(_:)`` other than `.corruptStore` (`.storeNotFound`, `.wrongKey`, …).
    public static func damage(of configuration: Configuration) throws -> String? {
        var readOnly = configuration
        readOnly.readOnly = true
        do {
            let cache = try TokenStore.open(readOnly)
            // Meta pages that disagree are not damage of this kind: LMDB reads the intact one (the last commit is
            // lost) and the store is usable as it is.
            try cache.read { reader in
                for database in KeySpace.allCases {
                    var walked = 0
                    try reader.transaction.forEach(in: database, prefix: []) { _, _ in
                        walked += 1
                        if walked % 4_096 == 0 { reader.releaseScannedPages() }
                        return true
                    }
                }
            }
            return nil
        } catch let error as TokenCacheError where error.code == .corruptStore {
            return error.message
        }
    }

    /// Moves a damaged store aside, whole, to `DIRECTORY.corrupt-TIMESTAMP` beside it, and creates a new, empty store
    /// in its place with the same key source: a client that cannot open its cache at all can start over (its users
    /// sign in again) without losing the old files, which stay for a later look. Never silent: it refuses a store that
    /// is not damaged (``damage(of:)``) unless `force`, and while any process has the store open (naming it).
    ///
    /// The move is one `rename`: a crash leaves the store under its old name or its new one. If a process creates a
    /// store in the directory between the move and the creation, that store is kept.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for a store that is not damaged (without `force`) or a target
    ///   that exists; `.storeInUse`; `.storeNotFound`; `.unsupportedEnvironment` for a store whose backend cannot move
    ///   it aside (in memory: the message names the capability); the errors of
    ///   ``create(_:)`` after the move (the damaged store is then already aside, and `cachetool init` creates the new
    ///   one).
    public static func quarantine(_ configuration: Configuration, force: Bool = false) throws -> QuarantineReport {
        let directory = configuration.directory
        // Refused before the damage check opens anything: a kind that cannot move a store aside (memory) says so.
        do { _ = try configuration.storage.quarantining() } catch { throw TokenCacheError.wrap(error, directory: directory) }
        let damage = force ? nil : try Self.damage(of: configuration)
        if !force, damage == nil {
            throw TokenCacheError(
                .invalidArgument,
                "the store at \(directory) opens and its trees are whole: nothing was moved (damaged records are for `verify --repair`)"
            )
        }
        // Through a symbolic link, the directory it names moves, and the new store is created there (the link then
        // names the new store).
        let resolved = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        let target = Self.quarantineName(for: resolved, at: Date())
        var fresh = configuration
        fresh.directory = resolved
        do { try fresh.storage.quarantining().moveAside(to: target) } catch { throw TokenCacheError.wrap(error, directory: directory) }
        do {
            _ = try TokenStore.create(fresh)
        } catch let error as TokenCacheError where error.code != .storeAlreadyExists {
            throw TokenCacheError(error.code, "the damaged store was moved to \(target), but creating an empty one failed: \(error.message)")
        }
        return QuarantineReport(directory: directory, movedTo: target, damage: damage)
    }

    /// `DIRECTORY.corrupt-20261124T203000Z`.
    static func quarantineName(for directory: String, at date: Date) -> String {
        timestampedSibling(of: directory, label: "corrupt", at: date)
    }
}
