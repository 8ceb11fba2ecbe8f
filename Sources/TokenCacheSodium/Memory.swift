internal import CSodium

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Constant-time comparison of secrets, tags and key checks.
package enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes, compared in time independent of their contents.
    ///
    /// Buffers of different lengths are unequal (lengths are not treated as secret). Not a lexicographic comparator.
    ///
    /// The corresponding libsodium function is `sodium_memcmp`.
    package static func equals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        // SAFETY: both buffers are valid for `a.count` bytes.
        return sodium_memcmp(a.sodiumRaw, b.sodiumRaw, a.count) == 0
    }
}

/// Wiping memory.
package enum Memory {
    /// Overwrites `buffer` with zeros in a way the optimizer cannot remove.
    ///
    /// The corresponding libsodium function is `sodium_memzero`.
    package static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        // SAFETY: `base` is valid for `buffer.count` writable bytes.
        sodium_memzero(base, buffer.count)
    }
}

/// Heap bytes from the C allocator.
///
/// Why not `UnsafeMutableRawPointer.allocate` or the heap path of `withUnsafeTemporaryAllocation`: on Linux the Swift
/// runtime serves both with `posix_memalign` whenever the requested alignment is the default (16 bytes or less), which
/// costs several times the instructions of `malloc` and takes the allocator's arena lock, which `malloc`'s per-thread
/// cache avoids (so two threads decrypting at once contend on it). `malloc` already returns 16-byte aligned memory.
extension Memory {
    /// `byteCount` bytes (at least one), 16-byte aligned, uninitialised. Free them with ``release(_:)``.
    /// Traps when memory is exhausted, as Swift's own allocation does.
    @inline(__always)
    package static func allocate(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        precondition(byteCount >= 0)
        guard let base = malloc(Swift.max(byteCount, 1)) else { fatalError("out of memory allocating \(byteCount) bytes") }
        return UnsafeMutableRawBufferPointer(start: base, count: byteCount)
    }

    /// Frees bytes from ``allocate(byteCount:)`` (without wiping them: wipe secrets first).
    @inline(__always)
    package static func release(_ buffer: UnsafeMutableRawBufferPointer) {
        free(buffer.baseAddress)
    }

    /// Lends `byteCount` temporary bytes to `body` and wipes them when it returns: on the stack when small (up to
    /// 1 KiB, where Swift allocates temporaries on the stack), else from ``allocate(byteCount:)``.
    @inline(__always)
    package static func withWipedTemporary<R, E: Error>(
        byteCount: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        if byteCount <= 1024 {
            return try withUnsafeTemporaryAllocation(byteCount: Swift.max(byteCount, 1), alignment: 16) { buffer throws(E) -> R in
                defer { zero(buffer) }
                return try body(UnsafeMutableRawBufferPointer(rebasing: buffer[..<byteCount]))
            }
        }
        let buffer = allocate(byteCount: byteCount)
        defer {
            zero(buffer)
            release(buffer)
        }
        return try body(buffer)
    }
}
