/// Base64url (RFC 4648 §5), the one codec the library uses: decoding JWT segments and `client_info`, encoding the
/// digests MSAL names cache partitions by.
///
/// Padding is optional (JWTs omit it, some `client_info` values carry it); when present it must be complete. Any
/// byte outside the URL-safe alphabet (no `+`, `/`, whitespace or line breaks), or a length no encoding produces,
/// makes the text invalid. Trailing bits of the last sextet are not checked.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url without padding.
    package static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group = 0
            for (offset, byte) in chunk.enumerated() { group |= Int(byte) << (16 - 8 * offset) }
            for sextet in 0...chunk.count { text.append(alphabet[(group >> (18 - 6 * sextet)) & 0x3F]) }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var body = Array(text)
        var padding = 0
        while body.last == UInt8(ascii: "=") { body.removeLast(); padding += 1 }
        if padding > 0 && (padding > 2 || (body.count + padding) % 4 != 0) { return nil }
        guard body.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(body.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in body {
            guard let sextet = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(sextet)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5A: byte - 0x41
        case 0x61...0x7A: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
