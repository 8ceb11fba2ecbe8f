import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A proxy in front of a Unix socket that a test can cut and restore: how a test cuts one host off from a shared
/// store's server without stopping the server for every other test.
///
/// It listens at `directory/name` and forwards each connection to `target`, a thread per direction. Cut, it closes
/// every connection it carries and closes each new one as soon as it is accepted, as a server that went away would;
/// restored, it forwards again.
public final class UnixSocketProxy: @unchecked Sendable {  // every mutable field is guarded by `lock`
    public let path: String
    let target: String
    private let listener: Int32
    private let lock = NSLock()
    private var open: Set<Int32> = []
    private var isCut = false

    public init(listeningAt path: String, forwardingTo target: String) throws {
        self.path = path
        self.target = target
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        try Self.withAddress(path) { address, length in
            guard bind(listener, address, length) == 0, listen(listener, 64) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        }
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Closes every connection it carries and refuses new ones until ``restore()``.
    public func cut() {
        let carried = lock.withLock { () -> Set<Int32> in
            isCut = true
            defer { open.removeAll() }
            return open
        }
        for descriptor in carried { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    /// Forwards new connections again.
    public func restore() { lock.withLock { isCut = false } }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            if lock.withLock({ isCut }) {
                close(client)
                continue
            }
            let upstream = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            let connected = (try? Self.withAddress(target) { address, length in connect(upstream, address, length) == 0 }) ?? false
            guard connected else {
                close(client)
                close(upstream)
                continue
            }
            lock.withLock { open.formUnion([client, upstream]) }
            let finished = Finished()
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread { [self] in
                    pump(from, to)
                    // The second direction to end closes both descriptors: neither is closed while the other still
                    // writes to it (a closed number may be reused by the next connection).
                    if finished.count() == 2 {
                        lock.withLock { open.subtract([client, upstream]) }
                        close(client)
                        close(upstream)
                    }
                }.start()
            }
        }
    }

    /// Counts the directions of one connection that have ended.
    private final class Finished: @unchecked Sendable {
        private let lock = NSLock()
        private var ended = 0
        func count() -> Int { lock.withLock { ended += 1; return ended } }
    }

    private func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
    }

    private static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) throws -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        return try withUnsafePointer(to: &address) {
            try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
