// The one place where Swift buffers become the pointers libsodium's C API takes.
//
// # `unsigned char *` policy
//
// libsodium declares its byte arguments as `unsigned char *` (imported as `UnsafePointer<UInt8>`), a few as `char *`
// (imported as `UnsafePointer<CChar>`: Argon2 passphrases, base64 text, KDF contexts) and memory helpers as `void *`.
// This module converts raw buffer pointers with `assumingMemoryBound(to: UInt8.self)` (or `CChar.self`), and does so
// only in this file (``UnsafeRawBufferPointer/sodiumBytes`` and friends); no other file calls
// `assumingMemoryBound`. Why that is sound:
//
// * The typed pointer is only handed to C and never dereferenced as `UInt8` in Swift, so Swift's typed-memory rules
//   are not exercised on the Swift side; C accesses through `unsigned char *`, which may alias anything.
// * Memory this module allocates (`sodium_malloc` in `SecureKey`, `SecureBuffer`) is bound to `UInt8` at allocation.
// * `CChar` and `UInt8` are signed/unsigned variants of each other, which Swift allows to alias.
//
// The alternative (C shims taking `void *`, as swift-crypto does) would need changes to the CSodium target.
//
// # Empty buffers
//
// An empty Swift buffer may have a nil `baseAddress`, but libsodium 1.0.18 marks several parameters `nonnull`
// (`npub` and `k` of the AEAD functions, every argument of `crypto_pwhash` and `crypto_kdf_derive_from_key`, the output
// of `crypto_generichash`), and Swift imports them as non-optional pointers. Every conversion below therefore returns
// a valid pointer: the buffer's own address, or ``zeroLengthSentinel`` when the buffer has none. libsodium is always
// told the true length (0) alongside it, so it never reads or writes the sentinel.

internal import CSodium

/// A valid, never-freed address passed to libsodium together with a length of 0.
///
/// SAFETY: libsodium reads or writes `len` bytes at a pointer it is given with `len`; with `len == 0` it touches
/// nothing, so sharing this address between threads is race-free. It is never written by Swift after initialization.
nonisolated(unsafe) private let zeroLengthSentinel: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
    pointer.initialize(repeating: 0, count: 16)
    return pointer
}()

extension UnsafeRawBufferPointer {
    /// The buffer as a non-nil `const unsigned char *` for libsodium; the zero-length sentinel when empty.
    var sodiumBytes: UnsafePointer<UInt8> {
        guard let base = baseAddress else { return UnsafePointer(zeroLengthSentinel) }
        return base.assumingMemoryBound(to: UInt8.self)
    }

    /// The buffer as a non-nil `const char *` for libsodium; the zero-length sentinel when empty.
    var sodiumChars: UnsafePointer<CChar> {
        UnsafeRawPointer(sodiumBytes).assumingMemoryBound(to: CChar.self)
    }

    /// The buffer as a non-nil `const void *`; the zero-length sentinel when empty.
    var sodiumRaw: UnsafeRawPointer {
        UnsafeRawPointer(sodiumBytes)
    }

    /// The buffer's length as libsodium's `unsigned long long`.
    var sodiumLength: UInt64 {
        UInt64(count)
    }
}

extension UnsafeMutableRawBufferPointer {
    /// The buffer as a non-nil `unsigned char *` for libsodium; the zero-length sentinel when empty.
    var sodiumMutableBytes: UnsafeMutablePointer<UInt8> {
        guard let base = baseAddress else { return zeroLengthSentinel }
        return base.assumingMemoryBound(to: UInt8.self)
    }

    /// The buffer as a non-nil `char *`; the zero-length sentinel when empty.
    var sodiumMutableChars: UnsafeMutablePointer<CChar> {
        UnsafeMutableRawPointer(sodiumMutableBytes).assumingMemoryBound(to: CChar.self)
    }

    /// The buffer as a non-nil `void *`; the zero-length sentinel when empty.
    var sodiumMutableRaw: UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(sodiumMutableBytes)
    }
}
