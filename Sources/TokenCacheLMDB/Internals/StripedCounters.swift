import Synchronization

/// A fixed set of atomic words, each on its own cache line, for state that many threads update at once without
/// sharing: each thread uses the word of its own stripe (``ThreadState/stripe``).
///
/// Why: an atomic read-modify-write on a cache line that another core wrote last waits for that line to move
/// between cores (hundreds of cycles on a multi-socket or virtualised machine). A lock word, a reference count or a
/// pool's head that every lookup touches makes two threads of one process slower together than two processes. With
/// one line per stripe, threads on different stripes never touch the same line.
final class StripedCounters: Sendable {
    static let stripes = 16
    private static let lineSize = 64

    // SAFETY: allocated and initialised once, never moved, freed in deinit; every word is only accessed atomically.
    nonisolated(unsafe) private let base: UnsafeMutableRawPointer

    init(initialValue: Int = 0) {
        base = UnsafeMutableRawPointer.allocate(byteCount: Self.stripes * Self.lineSize, alignment: Self.lineSize)
        // Binds each line's first word to `Atomic<Int>`, after which `word(_:)` may assume that binding.
        for stripe in 0..<Self.stripes {
            _ = (base + stripe * Self.lineSize).initializeMemory(as: Atomic<Int>.self, to: Atomic<Int>(initialValue))
        }
    }

    deinit {
        for stripe in 0..<Self.stripes { _ = word(stripe).deinitialize(count: 1) }
        base.deallocate()
    }

    private func word(_ stripe: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (base + (stripe & (Self.stripes - 1)) * Self.lineSize).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// The atomic word of `stripe` (any integer; taken modulo the number of stripes).
    @inline(__always)
    subscript(stripe: Int) -> UnsafeMutablePointer<Atomic<Int>> { word(stripe) }
}
