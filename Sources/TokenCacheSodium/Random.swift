internal import CSodium

/// Cryptographically secure random bytes from libsodium's generator (`getrandom()` on Linux; no reseeding needed
/// after `fork()`).
package enum Random {
    /// Fills `buffer` with random bytes. An empty buffer is left alone.
    ///
    /// Stops the process if libsodium cannot be initialized: without a working generator nothing here is safe, and
    /// libsodium itself aborts when its generator fails.
    ///
    /// The corresponding libsodium function is `randombytes_buf`.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        Sodium.initializeOrTrap()
        // SAFETY: `base` is valid for `buffer.count` writable bytes (nonnull).
        randombytes_buf(base, buffer.count)
    }

    /// Returns `count` random bytes.
    ///
    /// For secrets, prefer ``SecureKey/init(randomCount:)``: an array cannot be wiped reliably.
    ///
    /// - Parameter count: The number of bytes; must not be negative (precondition).
    package static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "Random.bytes: count must not be negative")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initializedCount = count
        }
    }

    /// `count` random bytes as lowercase hex (two digits each): an identifier no one can guess, for names and
    /// holders (a refresh lease's holder, a host of a shared store).
    package static func hexIdentifier(bytes count: Int) -> String { Hex.encode(bytes(count)) }
}
