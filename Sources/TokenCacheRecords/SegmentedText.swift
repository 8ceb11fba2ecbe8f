internal import CBase64URL

#if canImport(Glibc)
import Glibc
#endif

/// Field type 0x04 of body schema 2 (FORMAT.md §5.3): a text kept as its dot-separated segments, each either decoded
/// from base64url or as it is. A JWT (`header.payload.signature`) is three base64url segments, so its bytes take three
/// quarters of its text; a token that is not base64url-shaped (or a part of one, like the `0` of `0.AXEA…`) keeps its
/// text, at a byte or two a segment.
///
/// ```
/// value   = segment × n          (n ≥ 1; the text is the segments' texts joined by ".")
/// segment = varint(count << 1 | raw) ‖ bytes
///           raw = 1: `count` bytes of UTF-8 text without "."
///           raw = 0: `count` bytes (≥ 1) whose canonical unpadded base64url is the segment's text
/// ```
///
/// Writers store a segment decoded only when decoding and encoding again gives back its exact text (the canonical
/// encoding: alphabet, length, zero trailing bits), so every text reads back byte for byte. The base64url conversions
/// run in constant time over the token's bytes (``CBase64URL``); what is not hidden is the token's shape: where its
/// dots are, and which segments are base64url (which the stored length shows anyway).
package enum SegmentedText {
    private static let dot = UInt8(ascii: ".")

    /// The bytes the value of `text` takes.
    package static func encodedCount(_ text: UnsafeRawBufferPointer) -> Int {
        var total = 0
        forEachSegment(text) { segment in
            let decoded = decodedCount(segment)
            let count = decoded ?? segment.count
            total += ByteWriter.varintCount(count << 1 | (decoded == nil ? 1 : 0)) + count
        }
        return total
    }

    /// Writes the value of `text` (exactly ``encodedCount(_:)`` bytes).
    package static func encode(_ text: UnsafeRawBufferPointer, into writer: inout ByteWriter) {
        forEachSegment(text) { segment in
            if let decoded = decodedCount(segment) {
                writer.write(varint: decoded << 1)
                let output = writer.reserve(decoded)
                var written = 0
                let status = tc_base64url_decode(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self), segment.baseAddress!.assumingMemoryBound(to: CChar.self),
                    segment.count, &written
                )
                precondition(status == 0 && written == decoded, "a segment decoded once did not decode again")
            } else {
                writer.write(varint: segment.count << 1 | 1)
                writer.write(segment)
            }
        }
    }

    /// Validates a stored value and returns the length of its text. A raw segment must be UTF-8 without ".", a decoded
    /// one at least one byte; nothing may follow the last segment.
    package static func textCount(ofValue value: UnsafeRawBufferPointer) throws(FormatError) -> Int {
        var reader = ByteReader(value)
        var total = -1  // n segments are joined by n − 1 dots
        repeat {
            let header = try reader.readVarint("segment header")
            let count = header >> 1
            let bytes = try reader.read(count: count, "segment")
            if header & 1 == 1 {
                guard isValidUTF8(bytes), !bytes.contains(UInt8(ascii: ".")) else {
                    throw FormatError("a text segment is not UTF-8 without '.'")
                }
                total += 1 + count
            } else {
                guard count > 0 else { throw FormatError("a decoded text segment is empty") }
                total += 1 + tc_base64url_encoded_count(count)
            }
        } while !reader.isAtEnd
        return total
    }

    /// ``textCount(ofValue:)`` of a value it has already accepted: the segments' lengths alone, nothing checked again
    /// (a lookup asks for the length of the token it is about to write out).
    package static func textCount(ofValidatedValue value: UnsafeRawBufferPointer) -> Int {
        var total = -1
        forEachStoredSegment(value) { raw, bytes in total += 1 + (raw ? bytes.count : tc_base64url_encoded_count(bytes.count)) }
        return total
    }

    /// Writes the text of a value that ``textCount(ofValue:)`` accepted into `output`, which holds exactly that many
    /// bytes.
    package static func writeText(ofValue value: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        var position = 0, first = true
        forEachStoredSegment(value) { raw, bytes in
            if !first {
                output[position] = UInt8(ascii: ".")
                position += 1
            }
            first = false
            if raw {
                if !bytes.isEmpty { (output.baseAddress! + position).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                position += bytes.count
            } else {
                tc_base64url_encode(
                    (output.baseAddress! + position).assumingMemoryBound(to: CChar.self), bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    bytes.count
                )
                position += tc_base64url_encoded_count(bytes.count)
            }
        }
        precondition(position == output.count, "a text segment's length changed between two reads")
    }

    /// The stored segments of a value ``textCount(ofValue:)`` accepted: whether each is kept as it is, and its bytes.
    private static func forEachStoredSegment(_ value: UnsafeRawBufferPointer, _ body: (_ raw: Bool, _ bytes: UnsafeRawBufferPointer) -> Void) {
        var reader = ByteReader(value)
        while !reader.isAtEnd {
            // SAFETY of try!: the value was validated by textCount(ofValue:) when its table was built.
            let header = try! reader.readVarint("segment header")
            body(header & 1 == 1, try! reader.read(count: header >> 1, "segment"))
        }
    }

    /// The dot-separated segments of `text` (one empty segment for an empty text).
    private static func forEachSegment(_ text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let base = text.baseAddress else { return body(text) }
        var start = 0
        while true {
            // memchr: a token is a kilobyte with two dots, and the C library scans a vector at a time.
            guard let found = memchr(base + start, Int32(dot), text.count - start) else {
                return body(UnsafeRawBufferPointer(rebasing: text[start...]))
            }
            let index = UnsafeRawPointer(found) - base
            body(UnsafeRawBufferPointer(rebasing: text[start..<index]))
            start = index + 1
        }
    }

    /// The bytes `segment` decodes to when it is the canonical base64url of at least one byte, else nil. Checked
    /// without decoding (in constant time, like the decoding).
    private static func decodedCount(_ segment: UnsafeRawBufferPointer) -> Int? {
        guard segment.count >= 2,
            tc_base64url_is_canonical(segment.baseAddress!.assumingMemoryBound(to: CChar.self), segment.count) == 1
        else { return nil }
        return segment.count * 3 / 4
    }
}
