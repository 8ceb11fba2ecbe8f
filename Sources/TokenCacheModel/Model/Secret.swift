internal import TokenCacheSodium

/// Token material (an access, refresh or ID token), held so that it cannot be printed by accident.
///
/// `print`, string interpolation, `dump`, `String(reflecting:)`, `Mirror` and error messages all show
/// ``Secret/redactionMarker``. The only way to the characters is the explicit ``reveal()`` (or
/// ``withUnsafeBytes(_:)``). `Secret` deliberately does not conform to `Encodable`: serializing a token has
/// to be spelled out. The bytes live in an engine-owned buffer that is wiped when the last copy is released
/// (best effort: a `String` a caller built from ``reveal()`` cannot be wiped).
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// What every redacted secret renders as.
    public static let redactionMarker = "<redacted>"

    private let storage: Storage

    /// Wraps the UTF-8 bytes of `value`.
    public init(_ value: String) {
        storage = Storage(Array(value.utf8))
    }

    /// Wraps raw bytes.
    public init(bytes: some Collection<UInt8>) {
        storage = Storage(Array(bytes))
    }

    /// Copies raw bytes straight into the secret's zeroizing storage (no intermediate copy).
    package init(copying bytes: UnsafeRawBufferPointer) {
        storage = Storage(bytes)
    }

    /// `count` bytes written by `fill` straight into the secret's zeroizing storage (a token re-encoded from its stored
    /// segments, with no buffer in between).
    package init(count: Int, filling fill: (UnsafeMutableRawBufferPointer) -> Void) {
        storage = Storage(count: count, filling: fill)
    }

    /// The number of bytes.
    public var count: Int { storage.buffer.count }
    /// Whether the secret has no bytes.
    public var isEmpty: Bool { storage.buffer.isEmpty }

    /// The secret as a string. Every call site of this is a place where a token leaves the library's custody.
    public func reveal() -> String {
        String(decoding: UnsafeRawBufferPointer(storage.buffer), as: UTF8.self)
    }

    /// Calls `body` with the secret's bytes, valid only during the call.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage.buffer))
    }

    /// Redacted: always ``redactionMarker``.
    public var description: String { Self.redactionMarker }
    /// Redacted: `Secret(<redacted>)`.
    public var debugDescription: String { "Secret(\(Self.redactionMarker))" }
    /// Redacted: a mirror without children, so `dump` and reflection show no bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Constant-time comparison of the bytes (lengths are not hidden).
    public static func == (lhs: Secret, rhs: Secret) -> Bool {
        lhs.storage === rhs.storage
            || ConstantTime.equals(UnsafeRawBufferPointer(lhs.storage.buffer), UnsafeRawBufferPointer(rhs.storage.buffer))
    }

    /// Hashes only the length, so that token bytes never enter a hasher.
    public func hash(into hasher: inout Hasher) { hasher.combine(count) }

    /// A heap copy of the bytes that is zeroed when released.
    private final class Storage: Sendable {
        // SAFETY: written once in init, read-only afterwards, wiped in deinit when no reader can remain.
        nonisolated(unsafe) let buffer: UnsafeMutableBufferPointer<UInt8>

        package init(_ bytes: [UInt8]) {
            buffer = bytes.withUnsafeBytes(Self.copy)
        }

        package init(_ bytes: UnsafeRawBufferPointer) {
            buffer = Self.copy(bytes)
        }

        package init(count: Int, filling fill: (UnsafeMutableRawBufferPointer) -> Void) {
            let raw = Memory.allocate(byteCount: count)
            fill(UnsafeMutableRawBufferPointer(rebasing: raw[..<count]))
            buffer = UnsafeMutableBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[..<count])
        }

        /// A copy from the C allocator, not `.allocate(capacity:)`: see `Memory.allocate(byteCount:)`.
        private static func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableBufferPointer<UInt8> {
            let raw = Memory.allocate(byteCount: bytes.count)
            raw.copyMemory(from: bytes)
            return UnsafeMutableBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[..<bytes.count])
        }

        deinit {
            let raw = UnsafeMutableRawBufferPointer(buffer)
            Memory.zero(raw)
            Memory.release(raw)
        }
    }
}
