import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reports the size of a file being written, ten times a second, from another thread: LMDB's copy is one C call with
/// no progress callback, and the size of its output is the only sign of how far it got.
///
/// The last report is made by ``stop()``, with the final size: however quick the copy, its caller hears of it once.
final class FileGrowthMonitor: Sendable {
    private let fd: Int32
    private let report: @Sendable (Int) -> Void
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts polling `fd` with `fstat`; `report` receives its size in bytes.
    init(fd: Int32, report: @escaping @Sendable (Int) -> Void) {
        self.fd = fd
        self.report = report
        DispatchQueue.global().async { [self] in
            while !stopped.load(ordering: .acquiring) {
                if let size = try? FileSystem.status(of: fd).size { report(size) }
                usleep(100_000)
            }
            finished.signal()
        }
    }

    /// Stops polling, reports the size the file has now, and returns once no report is under way (the caller may
    /// close the descriptor then).
    func stop() {
        stopped.store(true, ordering: .releasing)
        finished.wait()
        if let size = try? FileSystem.status(of: fd).size { report(size) }
    }
}
