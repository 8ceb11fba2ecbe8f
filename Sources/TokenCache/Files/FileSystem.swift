import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The few POSIX file operations the library needs, with errors that name the path and the fix: the store's directory
/// and files (made 0700, checked private), the key files (checked as OpenSSH checks private keys), and the operator's
/// backups and salvages (where a copy may go). One helper for all of them, below both the store and the key layer, so
/// that each checks ownership and modes by the same rule and neither depends on the other for it.
///
/// The LMDB wrapper keeps its own few calls (`TokenCacheLMDB`'s `FileSystem`): it is below the storage seam, throws
/// `LMDBError` with the bare `errno`, and works on LMDB's own descriptor; this one throws ``TokenCacheError``, which
/// that module must not know.
package enum FileSystem {
    package static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode, radix: 8) }

    static func parent(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path
    }

    /// Whether `path` is a directory (following a final symbolic link, as opening it would).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Creates `path` and missing parents with mode 0700 (exactly, whatever the umask). An existing
    /// directory is left as it is; the caller checks it.
    package static func makeDirectory(_ path: String) throws(TokenCacheError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw TokenCacheError(.invalidArgument, "\(path) exists and is not a directory (a store is a directory)")
            }
            return
        }
        let parentPath = parent(of: path)
        if parentPath != path { try makeDirectory(parentPath) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw TokenCacheError(.ioFailure, "cannot create directory \(path): \(describe(errno))")
        }
        if chmod(path, 0o700) != 0 {
            throw TokenCacheError(.ioFailure, "cannot set mode 0700 on \(path): \(describe(errno))")
        }
    }

    static func makeDirectories(parentOf path: String) throws(TokenCacheError) {
        try makeDirectory(parent(of: path))
    }

    /// `st_size` of the file at `path`, or nil when it cannot be `stat`ed.
    static func size(at path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// `realpath(3)` of `path` (symlinks, `.` and `..` resolved), or nil when it does not exist.
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Where `directory` is, or would be once created, relative to the store directory `store`: to refuse a copy (a
    /// backup, a salvage) into the store itself or nested inside it, before anything is created.
    package static func placement(of directory: String, relativeTo store: String) -> Placement {
        let target = resolvedPathAllowingMissing(directory), source = resolvedPathAllowingMissing(store)
        if target == source { return .same }
        return target.hasPrefix(source + "/") ? .inside : .outside
    }

    package enum Placement { case same, inside, outside }

    /// Where `path` is or would be created: its longest existing ancestor resolved (``resolvedPath(_:)``), then the
    /// components that do not exist yet (`.` and `..` among them taken as written). To compare places before creating
    /// anything.
    static func resolvedPathAllowingMissing(_ path: String) -> String {
        var existing = URL(fileURLWithPath: path).standardized
        var missing: [String] = []
        while resolvedPath(existing.path) == nil, existing.path != "/" {
            missing.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        return ([resolvedPath(existing.path) ?? existing.path] + missing).joined(separator: "/").replacingOccurrences(of: "//", with: "/")
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// A store directory or file must be owned by the effective user with no group or other permission bits.
    package static func checkPrivate(_ path: String, what: String, fix: String) throws(TokenCacheError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TokenCacheError(.ioFailure, "cannot stat \(what) \(path): \(describe(errno))")
        }
        try checkOwnerAndMode(info, path: path, what: what, fix: fix)
    }

    /// Owned by the effective user, no permission bit for group or others (what ssh demands of private keys).
    static func checkOwnerAndMode(_ info: stat, path: String, what: String, fix: String) throws(TokenCacheError) {
        guard info.st_uid == geteuid() else {
            throw TokenCacheError(.insecurePermissions, "\(what) \(path) is owned by uid \(info.st_uid), not by this user")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw TokenCacheError(
                .insecurePermissions,
                "\(what) \(path) has mode \(octal(info.st_mode & 0o777)), accessible to others; run `\(fix)`"
            )
        }
    }

    /// Like OpenSSH's StrictModes: whoever can write the directory can replace the file.
    static func checkParentNotWritableByOthers(of path: String, what: String) throws(TokenCacheError) {
        let directory = parent(of: path)
        var info = stat()
        guard stat(directory, &info) == 0 else { return }
        if info.st_mode & 0o022 != 0 && info.st_mode & S_ISVTX == 0 {
            throw TokenCacheError(
                .insecurePermissions,
                "the directory of \(what) \(path) (\(directory)) is writable by group or others "
                    + "(mode \(octal(info.st_mode & 0o777))); run `chmod go-w \(directory)`"
            )
        }
    }
}
