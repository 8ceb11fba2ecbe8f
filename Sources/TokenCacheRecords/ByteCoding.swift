internal import TokenCacheSodium

/// Sequential big-endian writing into a buffer whose size was computed in advance.
///
/// Every integer in FORMAT.md is big-endian, so that keys sort numerically under LMDB's `memcmp`.
/// Writers compute the exact size first and write into a preallocated (often zeroizing or LMDB-reserved)
/// buffer, so plaintext is never spread over reallocated copies.
package struct ByteWriter {
    @usableFromInline let buffer: UnsafeMutableRawBufferPointer
    package fileprivate(set) var position = 0

    package init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    package var remaining: Int { buffer.count - position }

    package mutating func write(_ byte: UInt8) {
        precondition(remaining >= 1, "ByteWriter overflow")
        buffer[position] = byte
        position += 1
    }

    @inlinable
    package mutating func write<T: FixedWidthInteger>(bigEndian value: T) {
        let size = MemoryLayout<T>.size
        precondition(remaining >= size, "ByteWriter overflow")
        buffer.storeBytes(of: value.bigEndian, toByteOffset: position, as: T.self)
        position += size
    }

    package mutating func write(_ bytes: UnsafeRawBufferPointer) {
        precondition(remaining >= bytes.count, "ByteWriter overflow")
        if let base = bytes.baseAddress, !bytes.isEmpty {
            (buffer.baseAddress! + position).copyMemory(from: base, byteCount: bytes.count)
        }
        position += bytes.count
    }

    /// An array's bytes in one copy (names, text and JSON values).
    package mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    @inlinable
    package mutating func write(_ bytes: some Collection<UInt8>) {
        precondition(remaining >= bytes.count, "ByteWriter overflow")
        for byte in bytes {
            buffer[position] = byte
            position += 1
        }
    }

    /// An unsigned LEB128 varint (FORMAT.md §1): seven bits a byte, least significant first, the high bit set on every
    /// byte but the last.
    package mutating func write(varint value: Int) {
        precondition(value >= 0 && value <= Int(UInt32.max), "varint out of range")
        var rest = UInt32(value)
        while rest >= 0x80 {
            write(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        write(UInt8(rest))
    }

    /// Bytes ``write(varint:)`` takes for `value`.
    @inlinable
    package static func varintCount(_ value: Int) -> Int {
        value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5
    }

    /// The region `[position, position + count)`, advancing past it (for in-place encryption output).
    package mutating func reserve(_ count: Int) -> UnsafeMutableRawBufferPointer {
        precondition(remaining >= count, "ByteWriter overflow")
        let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[position..<(position + count)])
        position += count
        return slice
    }
}

/// Sequential big-endian reading with bounds checks that throw instead of trapping: stored bytes are
/// untrusted input until authenticated, and sometimes after (a writer with the key may be buggy).
///
/// The `what` descriptions are autoclosures: they are built only when a read fails, never on the hot path.
package struct ByteReader {
    package let bytes: UnsafeRawBufferPointer
    package internal(set) var position = 0

    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    package var remaining: Int { bytes.count - position }
    package var isAtEnd: Bool { position == bytes.count }

    package mutating func readByte(_ what: @autoclosure () -> String) throws(FormatError) -> UInt8 {
        guard remaining >= 1 else { throw FormatError("truncated: missing \(what())") }
        defer { position += 1 }
        return bytes[position]
    }

    @inlinable
    package mutating func read<T: FixedWidthInteger>(_: T.Type, _ what: @autoclosure () -> String) throws(FormatError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw FormatError("truncated: missing \(what())") }
        // SAFETY: mapped LMDB bytes carry no alignment guarantee, hence loadUnaligned.
        let value = bytes.loadUnaligned(fromByteOffset: position, as: T.self)
        position += size
        return T(bigEndian: value)
    }

    package mutating func read(count: Int, _ what: @autoclosure () -> String) throws(FormatError) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw FormatError("truncated: \(what()) needs \(count) bytes") }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    }

    /// An unsigned LEB128 varint of at most 32 bits in its shortest form (FORMAT.md §1): a longer spelling of the same
    /// number (a last byte of zero) or one above 2^32 − 1 is refused, so that each value has one encoding.
    @inlinable
    package mutating func readVarint(_ what: @autoclosure () -> String) throws(FormatError) -> Int {
        guard remaining >= 1 else { throw FormatError("truncated: missing \(what())") }
        let first = bytes[position]
        if first < 0x80 {  // lengths under 128 bytes: almost every field
            position += 1
            return Int(first)
        }
        var value = 0, shift = 0
        while true {
            guard remaining >= 1 else { throw FormatError("truncated: missing \(what())") }
            let byte = bytes[position]
            position += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 {
                guard byte != 0 else { throw FormatError("\(what()) is not in its shortest form") }
                guard value <= Int(UInt32.max) else { throw FormatError("\(what()) exceeds 32 bits") }
                return value
            }
            shift += 7
            guard shift < 35 else { throw FormatError("\(what()) exceeds 32 bits") }
        }
    }

    package mutating func readRest() -> UnsafeRawBufferPointer {
        defer { position = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[position...])
    }
}

/// Constant-time equality of two byte arrays (lengths are not hidden).
package func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in ConstantTime.equals(left, right) } }
}

extension StaticString {
    /// The bytes of a static ASCII string, without building a `String`.
    @inlinable
    package var utf8: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: utf8Start, count: utf8CodeUnitCount) }
}
