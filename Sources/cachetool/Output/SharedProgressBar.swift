import Synchronization

/// A ``ProgressBar`` that a library callback may update from another thread (the library reports a copy's progress
/// from the thread that watches the file grow). The bar itself is not thread-safe, so every use goes through a lock.
final class SharedProgressBar: Sendable {
    private let bar: Mutex<ProgressBar?>

    /// nil when standard error is not a terminal (as ``ProgressBar``).
    init?(label: String, unit: String, delay: Double = 0.5) {
        guard let bar = ProgressBar(label: label, unit: unit, delay: delay) else { return nil }
        self.bar = Mutex(bar)
    }

    func update(done: Int, total: Int) {
        bar.withLock { $0?.update(done: done, total: max(total, done)) }
    }

    func finish() {
        bar.withLock { $0?.finish() }
    }
}
