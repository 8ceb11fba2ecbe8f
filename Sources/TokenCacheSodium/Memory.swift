internal import CSodium

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
