import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Overwriting an imported plaintext cache with zeros, then removing it (`cachetool import --shred-source`).
///
/// The file's identity (device, inode, size, modification and change times) and a digest of its content are taken
/// before the import reads it, and checked again on the descriptor that overwrites it, right before the zeros: a
/// file that another program rewrote in between (Azure CLI refreshing a token) may hold a token the store does not,
/// and is kept. The content is compared too because a rewrite of the same size within one tick of the file system's
/// clock leaves the times as they were. Writers that take msal-extensions' lock cannot rewrite it at all meanwhile
/// (``MSALCacheFileLock``); these checks catch the others. Only a regular file with one name is overwritten: a
/// symbolic link would send the zeros elsewhere, and a file with other hard links keeps them.
enum SourceShredding {
    /// Why the file is kept; said to the user.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// What identifies one version of one file.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: [Int]
        var changed: [Int]

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modified = [status.st_mtim.tv_sec, status.st_mtim.tv_nsec]
            changed = [status.st_ctim.tv_sec, status.st_ctim.tv_nsec]
        }
    }

    /// What a file held: its size and a keyed hash of its bytes (the key is this process's random hashing seed, so
    /// another program cannot make two contents collide).
    struct Content: Equatable {
        var size: Int64
        var hash: Int
    }

    static func errorText() -> String { String(cString: strerror(errno)) }

    /// The content of the file at `path`.
    static func content(of path: String) throws(Refusal) -> Content {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw Refusal("cannot open it for reading: \(errorText())") }
        defer { close(descriptor) }
        return try content(of: descriptor)
    }

    /// The content of the open file `descriptor`, read from its start.
    private static func content(of descriptor: Int32) throws(Refusal) -> Content {
        var hasher = Hasher()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var size: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(size)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Refusal("reading it failed at byte \(size): \(errorText())") }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            size += Int64(count)
        }
        return Content(size: size, hash: hasher.finalize())
    }

    /// The identity of the file at `path`, if it can be shredded.
    static func identity(of path: String) throws(Refusal) -> Identity {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw Refusal("cannot examine it: \(errorText())") }
        try check(status)
        return Identity(status)
    }

    private static func check(_ status: stat) throws(Refusal) {
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: throw Refusal("it is a symbolic link; give the file it points to")
        default: throw Refusal("it is not a regular file")
        }
        if status.st_nlink != 1 { throw Refusal("it has \(status.st_nlink - 1) other hard link(s), which would keep its content") }
    }

    /// Overwrites the file with zeros, flushes it to the device, and removes it, if it is still `expected` and
    /// still holds `content`.
    static func shred(_ path: String, expected: Identity, content expectedContent: Content) throws(Refusal) {
        let descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw Refusal("cannot open it for writing: \(errorText())") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Refusal("cannot examine it: \(errorText())") }
        try check(status)
        guard Identity(status) == expected, try content(of: descriptor) == expectedContent else {
            throw Refusal("it changed while it was imported (another program wrote it); import it again")
        }
        let zeros = [UInt8](repeating: 0, count: 64 * 1024)
        var offset: Int64 = 0
        while offset < expected.size {
            let count = Int(min(Int64(zeros.count), expected.size - offset))
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, count, off_t(offset)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Refusal("overwriting it failed at byte \(offset) (\(errorText())): it is partly overwritten; remove it by hand") }
            offset += Int64(written)
        }
        guard fsync(descriptor) == 0 else { throw Refusal("flushing the zeros failed (\(errorText())); remove it by hand") }
        guard unlink(path) == 0 else { throw Refusal("it was overwritten with zeros but not removed: \(errorText())") }
        // The removal itself, durable: the directory's entry is gone after a crash too.
        let directory = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// What no program can promise about overwriting a file in place.
    static let caveat = """
        overwriting a file in place cannot guarantee that its old content is gone: copy-on-write and journaling \
        file systems (btrfs, ZFS, ext4 with data=journal) write the new blocks elsewhere, SSDs remap blocks, and \
        backups, snapshots and other copies may hold the file. If it may have been copied, the safest next step is \
        to revoke its tokens: sign out (az logout, or the application's sign-out) and end the account's sessions, \
        then sign in again.
        """
}
