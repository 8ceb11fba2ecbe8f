#if canImport(Glibc)
import Glibc
#endif

/// Standard output for a command that prints as it reads a store: lines are collected and written in blocks of
/// 64 KiB (a million-record listing is not a million `write` calls), and on a terminal also whenever the command
/// finishes a group, so a person sees rows as they are found. A progress bar on the same terminal is cleared before
/// each write and comes back with the next update.
final class StreamOutput {
    /// The reader of standard output went away (`cachetool inspect | head`): the command stops, successfully.
    struct Closed: Error {}

    /// Standard output could not be written (a full disk under `> file`): exit 74.
    struct WriteFailed: Error {
        let code: Int32
        var message: String { "cannot write the output: " + String(cString: strerror(code)) }
    }

    private static let blockSize = 64 * 1024
    private var buffer: [UInt8] = []
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    let progress: ProgressBar?

    init(progress: ProgressBar?) {
        self.progress = progress
        buffer.reserveCapacity(Self.blockSize + 4096)
    }

    /// Adds `text` and a newline.
    func line(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= Self.blockSize { try flush() }
    }

    /// A group of lines is complete: shown now on a terminal.
    func groupEnded() throws {
        if isTerminal { try flush() }
    }

    /// Writes what is collected.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        progress?.finish()
        var written = 0
        while written < buffer.count {
            let result = buffer.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + written, $0.count - written) }
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EPIPE { throw Closed() }
                throw WriteFailed(code: code)
            }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
