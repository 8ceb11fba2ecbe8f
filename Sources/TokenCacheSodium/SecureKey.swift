internal import CSodium

/// Long-lived key material held in libsodium's guarded memory.
///
/// The bytes live in memory from `sodium_malloc`, which libsodium places between guard pages, protects with a canary,
/// locks with `mlock` (best effort; libsodium ignores an `RLIMIT_MEMLOCK` refusal) and excludes from core dumps
/// (`MADV_DONTDUMP`). After initialization the region is switched to read-only with `sodium_mprotect_readonly`, so a
/// stray write faults instead of silently changing the key. `deinit` releases it with `sodium_free`, which zeroes it.
///
/// A key is immutable after `init`, which is what makes it `Sendable`. Its bytes are reachable only through
/// ``withUnsafeBytes(_:)``; it never hands out `[UInt8]` or `Data`. `description`, `debugDescription` and
/// `customMirror` (so `print`, interpolation, `String(reflecting:)`, `dump` and `Mirror`) show only
/// `SecureKey(<redacted>, N bytes)`.
///
/// `sodium_malloc` is slow and costs several pages per allocation: use it for keys, not for per-record data
/// (see ``SecureBuffer``).
///
/// For example:
///
/// ```swift
/// let root = try SecureKey(randomCount: 32)
/// let recordKey = try KeyDerivation.deriveKey(from: root, id: 1, context: "tcacheV1")
/// ```
package final class SecureKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The number of key bytes. Always greater than zero.
    package let count: Int

    /// The `sodium_malloc` region holding `count` bytes, bound to `UInt8`.
    ///
    /// SAFETY: written only during `init` (before `self` exists and before `sodium_mprotect_readonly`), then only read,
    /// and freed only in `deinit`; concurrent reads of immutable memory are race-free.
    private nonisolated(unsafe) let base: UnsafeMutableRawPointer

    private init(adopting base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit {
        // SAFETY: `base` came from sodium_malloc and is freed exactly once. sodium_free() re-enables write access
        // (undoing sodium_mprotect_readonly), checks the canary, and zeroes the region before unmapping it.
        sodium_free(base)
    }

    // MARK: - Creating keys

    /// Creates a key of `count` random bytes.
    ///
    /// - Parameter count: The key length in bytes; must be greater than zero.
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/invalidLength`` if `count` is not positive,
    ///   ``SodiumError/Code/outOfMemory`` if `sodium_malloc` fails.
    ///
    /// The corresponding libsodium function is `randombytes_buf`.
    package convenience init(randomCount count: Int) throws(SodiumError) {
        try self.init(count: count, filling: { (bytes) throws(SodiumError) in
            Random.fill(bytes)
        })
    }

    /// Creates a key holding a copy of `bytes`.
    ///
    /// The caller remains responsible for wiping its own copy (for example with ``Memory/zero(_:)``).
    ///
    /// - Parameter bytes: The key material; must not be empty.
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/invalidLength`` if `bytes` is empty,
    ///   ``SodiumError/Code/outOfMemory`` if `sodium_malloc` fails.
    package convenience init(copying bytes: UnsafeRawBufferPointer) throws(SodiumError) {
        try self.init(count: bytes.count, filling: { (destination) throws(SodiumError) in
            destination.copyMemory(from: bytes)
        })
    }

    /// Creates a key of `count` bytes written in place by `initializer`.
    ///
    /// `initializer` receives the key's guarded memory, zero-filled, and must write all `count` bytes. Writing in place
    /// avoids an intermediate copy of the key in ordinary memory. The buffer is valid only during the call. If
    /// `initializer` throws, the memory is wiped and freed and the error is rethrown.
    ///
    /// For example:
    ///
    /// ```swift
    /// let key = try SecureKey(count: 32) { buffer in try readExactly(fileDescriptor, into: buffer) }
    /// ```
    ///
    /// - Parameters:
    ///   - count: The key length in bytes; must be greater than zero.
    ///   - initializer: Fills the buffer.
    /// - Throws: A ``SodiumError`` (``SodiumError/Code/invalidLength``, ``SodiumError/Code/outOfMemory``), or whatever
    ///   `initializer` throws.
    package convenience init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        let base = try Self.allocate(count: count)
        do {
            try initializer(UnsafeMutableRawBufferPointer(start: base, count: count))
        } catch {
            // sodium_free() zeroes the region; nothing written so far survives.
            sodium_free(base)
            throw error
        }
        Self.seal(base)
        self.init(adopting: base, count: count)
    }

    /// Creates a key written in place by a libsodium call; the typed-throws twin of `init(count:initializer:)` used
    /// inside this module.
    convenience init(count: Int, filling fill: (UnsafeMutableRawBufferPointer) throws(SodiumError) -> Void)
        throws(SodiumError)
    {
        let base = try Self.allocate(count: count)
        do {
            try fill(UnsafeMutableRawBufferPointer(start: base, count: count))
        } catch {
            sodium_free(base)
            throw error
        }
        Self.seal(base)
        self.init(adopting: base, count: count)
    }

    /// Allocates `count` zeroed bytes with `sodium_malloc`, bound to `UInt8`.
    private static func allocate(count: Int) throws(SodiumError) -> UnsafeMutableRawPointer {
        guard count > 0 else {
            throw SodiumError(.invalidLength, "a key must have at least 1 byte, got \(count)")
        }
        // sodium.h: "sodium_malloc() can be used [...] after sodium_init()". It returns NULL on failure.
        try Sodium.initialize()
        guard let base = sodium_malloc(count) else {
            throw SodiumError(.outOfMemory, "sodium_malloc failed to allocate \(count) bytes of guarded memory")
        }
        // SAFETY: sodium_malloc returned `count` writable bytes (filled with a garbage value); zero them, then bind
        // them to UInt8, the type libsodium's `unsigned char *` parameters are imported as.
        sodium_memzero(base, count)
        base.bindMemory(to: UInt8.self, capacity: count)
        return base
    }

    /// Makes the initialized key region read-only.
    ///
    /// Best effort: if `mprotect` is refused the key stays writable from C but is still never written by this module.
    private static func seal(_ base: UnsafeMutableRawPointer) {
        _ = sodium_mprotect_readonly(base)
    }

    // MARK: - Using keys

    /// Calls `body` with the key bytes.
    ///
    /// The buffer is valid only during the call and is read-only memory: writing through it faults. Do not copy the
    /// bytes into ordinary memory that outlives the call.
    ///
    /// - Parameter body: A closure that reads the key.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // SAFETY: `base` holds `count` initialized bytes until deinit, and `self` is alive for the whole call.
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Compares two keys in constant time (for equal lengths).
    ///
    /// Keys of different lengths are unequal; the length is not secret.
    ///
    /// The corresponding libsodium function is `sodium_memcmp`.
    package func constantTimeEquals(_ other: SecureKey) -> Bool {
        guard count == other.count else { return false }
        // SAFETY: both regions hold `count` readable bytes while both keys are alive (they are, as self and other).
        return sodium_memcmp(base, other.base, count) == 0
    }

    // MARK: - Redacted rendering

    /// `SecureKey(<redacted>, N bytes)`.
    package var description: String {
        "SecureKey(<redacted>, \(count) bytes)"
    }

    /// `SecureKey(<redacted>, N bytes)`.
    package var debugDescription: String {
        description
    }

    /// A mirror with a single `count` child, so `dump` and `Mirror` never reach the key bytes.
    package var customMirror: Mirror {
        Mirror(self, children: ["count": count], displayStyle: .class)
    }
}
