import Foundation
internal import TokenCacheSodium

#if canImport(Glibc)
import Glibc
internal import TokenCacheRecords
#endif

/// Key files: 32 random bytes, checked the way OpenSSH checks private keys before trusting them.
public enum KeyFile {
    /// The size of a key file, and of the root key: 32 bytes.
    public static let byteCount = 32

    /// Creates a new key file with 32 random bytes, mode 0600 regardless of the umask, refusing to
    /// overwrite anything. Missing parent directories are created with mode 0700.
    /// - Throws: ``TokenCacheError`` (`.keyUnavailable` if the file exists or cannot be written).
    public static func create(at path: String) throws {
        try FileSystem.makeDirectories(parentOf: path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST {
                throw TokenCacheError(.keyUnavailable, "key file \(path) already exists; refusing to overwrite it")
            }
            throw TokenCacheError(.keyUnavailable, "cannot create key file \(path): \(FileSystem.describe(code))")
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw TokenCacheError(.keyUnavailable, "cannot set mode 0600 on \(path): \(FileSystem.describe(errno))")
        }
        let key = try SodiumCall.run { try SecureKey(randomCount: byteCount) }
        let written = key.withUnsafeBytes { bytes in write(descriptor, bytes.baseAddress, bytes.count) }
        guard written == byteCount, fsync(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw TokenCacheError(.keyUnavailable, "cannot write key file \(path): \(FileSystem.describe(code))")
        }
    }

    /// Reads and checks a key file: a regular file (not a symlink, FIFO or device), owned by the effective
    /// user, with no group or other permission bits, in a directory others cannot write, exactly 32 bytes.
    static func read(at path: String) throws(TokenCacheError) -> SecureKey {
        // O_NONBLOCK: opening a FIFO must not hang; O_NOFOLLOW: a symlink fails with ELOOP.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            switch code {
            case ENOENT:
                throw TokenCacheError(.keyUnavailable, "key file \(path) does not exist")
            case ELOOP:
                throw TokenCacheError(.insecurePermissions, "key file \(path) is a symbolic link; refusing to follow it")
            default:
                throw TokenCacheError(.keyUnavailable, "cannot open key file \(path): \(FileSystem.describe(code))")
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw TokenCacheError(.keyUnavailable, "cannot stat key file \(path): \(FileSystem.describe(errno))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw TokenCacheError(.keyUnavailable, "key file \(path) is not a regular file")
        }
        try FileSystem.checkOwnerAndMode(info, path: path, what: "key file", fix: "chmod 600 \(path)")
        try FileSystem.checkParentNotWritableByOthers(of: path, what: "key file")
        guard info.st_size == byteCount else {
            throw TokenCacheError(
                .keyUnavailable, "key file \(path) has \(info.st_size) bytes; a key file holds exactly \(byteCount)"
            )
        }
        return try SodiumCall.run {
            try SecureKey(count: byteCount) { buffer in
                var offset = 0
                while offset < byteCount {
                    let count = Glibc.read(descriptor, buffer.baseAddress! + offset, byteCount - offset)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { throw FormatError("short read") }
                    offset += count
                }
            }
        } orElse: { TokenCacheError(.keyUnavailable, "cannot read key file \(path)") }
    }
}
