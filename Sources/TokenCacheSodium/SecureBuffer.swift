internal import CSodium

/// A fixed-size heap buffer for plaintext that is wiped when released.
///
/// The storage is zero-filled at creation; `deinit` overwrites its whole capacity with `sodium_memzero` (which the
/// optimizer cannot remove) before freeing it, in the manner of swift-crypto's `SecureBytes`. Use it for decrypted
/// records and other short-lived secrets; use ``SecureKey`` for long-lived keys.
///
/// The memory is ordinary heap memory (no guard pages, not locked): wiping is best effort, and copies a caller makes
/// (a `String`, a `[UInt8]`) are not covered.
///
/// A `SecureBuffer` is mutable through ``withUnsafeMutableBytes(_:)`` and is therefore not `Sendable`.
///
/// For example:
///
/// ```swift
/// let plaintext = SecureBuffer(count: ciphertext.count - XChaCha20Poly1305.tagByteCount)
/// try plaintext.withUnsafeMutableBytes { output in
///     try XChaCha20Poly1305.open(ciphertext, associatedData: ad, nonce: nonce, key: key, into: output)
/// }
/// ```
package final class SecureBuffer {
    /// The allocation; at least one byte so that `baseAddress` is never nil.
    private let storage: UnsafeMutableRawBufferPointer
    private let byteCount: Int

    /// Creates a zero-filled buffer of `count` bytes.
    ///
    /// - Parameter count: The size in bytes; must not be negative (precondition).
    package init(count: Int) {
        precondition(count >= 0, "SecureBuffer count must not be negative")
        storage = Memory.allocate(byteCount: Swift.max(count, 1))
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        byteCount = count
    }

    deinit {
        // SAFETY: `storage` is this object's own allocation, alive until the deallocate below.
        sodium_memzero(storage.baseAddress, storage.count)
        Memory.release(storage)
    }

    /// The number of bytes in the buffer.
    package var count: Int {
        byteCount
    }

    /// Calls `body` with the buffer's bytes. The pointer is valid only during the call.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // SAFETY: `storage` holds at least byteCount initialized bytes until deinit, and `self` is alive here.
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<byteCount]))
    }

    /// Calls `body` with the buffer's bytes for writing. The pointer is valid only during the call.
    package func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        // SAFETY: as above; the buffer is not Sendable, so no other thread can hold it during the call.
        try body(UnsafeMutableRawBufferPointer(rebasing: storage[0..<byteCount]))
    }
}

@available(*, unavailable)
extension SecureBuffer: Sendable {}
