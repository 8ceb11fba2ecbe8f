internal import CSodium

/// Keyed BLAKE2b (`crypto_generichash` with a key) for one fixed key and output length, with the key block
/// compressed once: every hash starts from the saved state.
///
/// Why: keyed BLAKE2b compresses the key, padded to a 128-byte block, before the message. For a blind-index
/// input (≈70 bytes, one block) that is half the compression work, repeated for every storage key, and a silent
/// lookup derives two. Measured on this project's VM for a 70-byte input: 340 → 155 ns in C, 330 → 235 ns through
/// this wrapper (the copy and wipe of the 384-byte state included).
///
/// libsodium has no call to save a state past its key block, so this prepares one with public calls (`init` with
/// the key, then `update` with 129 bytes, which compresses the key block) and one private step: the prepared
/// state's buffer length is set back to 0, discarding the filler. That field's place comes from libsodium's
/// `blake2b_state` (`h[8]`, `t[2]`, `f[2]`, `buf[256]`, `buflen`: offset 352). Before use the result is checked
/// against `crypto_generichash` at the block boundaries (a different layout fails there); if it differs, every hash
/// takes the plain path, which is always correct. The tests compare every length up to 600 bytes.
///
/// An empty input always takes the plain path: keyed BLAKE2b of nothing finalises the key block itself.
///
/// For example:
///
/// ```swift
/// let hasher = try KeyedHasher(key: indexKey, outputCount: 16)
/// try hasher.hash(input, into: output)  // output.count == 16
/// ```
package final class KeyedHasher: Sendable {
    package let key: SecureKey
    package let outputCount: Int
    /// The `crypto_generichash_state` after the key block, in guarded read-only memory (it is as secret as the
    /// key); nil when the self-check failed.
    private let midstate: SecureKey?

    /// Whether hashes start from the saved state (false only on a libsodium whose state layout differs).
    package var usesSavedState: Bool { midstate != nil }

    /// `crypto_generichash_state` (an over-aligned C struct, which Swift sees only as an opaque pointer).
    static let stateCount = crypto_generichash_statebytes()
    static let stateAlignment = 64
    private static let bufferLengthOffset = 8 * 8 + 2 * 8 + 2 * 8 + 256

    /// - Throws: ``SodiumError`` `.invalidLength` for a key or output length `crypto_generichash` refuses,
    ///   `.outOfMemory` if guarded memory cannot be allocated.
    package init(key: SecureKey, outputCount: Int) throws(SodiumError) {
        try Sodium.initialize()
        self.key = key
        self.outputCount = outputCount
        // Validates the lengths the same way every later plain hash would (and fails here, not there).
        _ = try GenericHash.hash(UnsafeRawBufferPointer(start: nil, count: 0), key: key, outputCount: outputCount)
        midstate = try Self.prepareSavedState(key: key, outputCount: outputCount)
    }

    /// Hashes `input` into `output` (exactly `outputCount` bytes).
    package func hash(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(SodiumError) {
        guard output.count == outputCount else {
            throw SodiumError(.invalidLength, "this hasher outputs \(outputCount) bytes, got a \(output.count)-byte buffer")
        }
        guard let midstate, !input.isEmpty else {
            try GenericHash.hash(input, key: key, into: output)
            return
        }
        Self.fromSavedState(midstate, input: input, into: output)
    }

    /// `update(input)` and `final` on a copy of the saved state, in a temporary on the stack wiped afterwards.
    ///
    /// The temporary is over-allocated at the stack's own alignment and aligned by hand: Swift places a temporary on
    /// the stack only up to 16-byte alignment, and serves a 64-byte aligned one from the heap (`posix_memalign`,
    /// about 700 instructions with its free, twice per lookup).
    private static func fromSavedState(_ saved: SecureKey, input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        withUnsafeTemporaryAllocation(byteCount: stateCount + stateAlignment, alignment: 16) { padded in
            let start = padded.baseAddress!.alignedUp(toMultipleOf: stateAlignment)
            let state = UnsafeMutableRawBufferPointer(start: start, count: stateCount)
            saved.withUnsafeBytes { state.copyMemory(from: $0) }  // every byte: no zeroing first
            defer { Memory.zero(state) }
            finish(state, input: input, into: output)
        }
    }

    /// `update(input)` then `final` on a prepared state.
    private static func finish(
        _ state: UnsafeMutableRawBufferPointer, input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) {
        // SAFETY: `state` holds a crypto_generichash_state (size and alignment of the C type); input and output are
        // valid for their lengths. Both calls only fail on a finalised state or a bad output length, neither
        // possible here (the output length was accepted by `init`).
        let typed = OpaquePointer(state.baseAddress!)
        _ = crypto_generichash_update(typed, input.sodiumBytes, input.sodiumLength)
        _ = crypto_generichash_final(typed, output.sodiumMutableBytes, output.count)
    }

    /// The state after the key block, or nil when hashes from it do not match `crypto_generichash`.
    private static func prepareSavedState(key: SecureKey, outputCount: Int) throws(SodiumError) -> SecureKey? {
        // Prepared in an aligned temporary (guarded memory has no 64-byte alignment) and copied straight into guarded
        // memory: no other copy of the state is made.
        let prepared = withUnsafeTemporaryAllocation(byteCount: stateCount, alignment: stateAlignment) { state in
            state.initializeMemory(as: UInt8.self, repeating: 0)
            defer { Memory.zero(state) }
            let typed = OpaquePointer(state.baseAddress!)
            let started = key.withUnsafeBytes { keyBytes in
                crypto_generichash_init(typed, keyBytes.sodiumBytes, keyBytes.count, outputCount)
            }
            guard started == 0 else { return Result<SecureKey?, SodiumError>.success(nil) }
            let filler = [UInt8](repeating: 0, count: 129)
            _ = filler.withUnsafeBytes { crypto_generichash_update(typed, $0.sodiumBytes, $0.sodiumLength) }
            guard bufferLengthOffset + 8 <= stateCount,
                state.load(fromByteOffset: bufferLengthOffset, as: Int.self) == 129  // the field is where expected
            else { return .success(nil) }
            state.storeBytes(of: 0, toByteOffset: bufferLengthOffset, as: Int.self)
            return Result { () throws(SodiumError) in
                try SecureKey(count: stateCount, filling: { (bytes) throws(SodiumError) in bytes.copyMemory(from: UnsafeRawBufferPointer(state)) })
            }
        }
        guard let saved = try prepared.get() else { return nil }
        // The self-check, at the block boundaries where a wrong layout would show: one byte, just under, at and over
        // one and two blocks. (Checking every length here cost ~0.1 ms per store opened; the tests do that.)
        var input = [UInt8](repeating: 0, count: 257)
        input.withUnsafeMutableBytes { Random.fill($0) }
        var actual = [UInt8](repeating: 0, count: outputCount)
        for length in [1, 70, 127, 128, 129, 255, 256, 257] {
            let expected = try input.withUnsafeBytes { all in
                Result { () throws(SodiumError) in
                    try GenericHash.hash(UnsafeRawBufferPointer(rebasing: all[..<length]), key: key, outputCount: outputCount)
                }
            }.get()
            input.withUnsafeBytes { all in
                actual.withUnsafeMutableBytes { output in
                    fromSavedState(saved, input: UnsafeRawBufferPointer(rebasing: all[..<length]), into: output)
                }
            }
            guard actual == expected else { return nil }
        }
        return saved
    }
}
