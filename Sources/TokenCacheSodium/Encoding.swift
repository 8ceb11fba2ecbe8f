internal import CSodium

/// Strict Base64 in constant time (libsodium's codec), for keys and other secrets given as text.
///
/// Decoding accepts exactly one ``Variant``: no whitespace or other ignored characters, correct padding (required by
/// the padded variants, rejected by the others), no trailing characters, and no non-zero bits in the last character.
///
/// The corresponding libsodium functions are `sodium_base642bin` and `sodium_bin2base64`.
package enum Base64 {
    /// The alphabet and padding rule.
    package enum Variant: Sendable {
        /// `+/` with `=` padding (RFC 4648 §4).
        case original
        /// `+/` without padding.
        case originalNoPadding
        /// `-_` with `=` padding (RFC 4648 §5).
        case urlSafe
        /// `-_` without padding.
        case urlSafeNoPadding

        var sodiumValue: Int32 {
            switch self {
            case .original: sodium_base64_VARIANT_ORIGINAL
            case .originalNoPadding: sodium_base64_VARIANT_ORIGINAL_NO_PADDING
            case .urlSafe: sodium_base64_VARIANT_URLSAFE
            case .urlSafeNoPadding: sodium_base64_VARIANT_URLSAFE_NO_PADDING
            }
        }
    }

    /// Decodes `text` (ASCII bytes) strictly.
    ///
    /// The array cannot be wiped reliably once returned; for key material prefer ``decodeKey(_:variant:)``.
    ///
    /// - Throws: A ``SodiumError`` with code ``SodiumError/Code/invalidEncoding`` if `text` is not strictly valid.
    package static func decode(_ text: UnsafeRawBufferPointer, variant: Variant) throws(SodiumError) -> [UInt8] {
        let capacity = maximumDecodedCount(text.count)
        var decodedCount = 0
        var result: Int32 = -1
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initializedCount in
            let output = UnsafeMutableRawBufferPointer(buffer)
            result = decode(text, variant: variant, into: output, decodedCount: &decodedCount)
            if result != 0 { Memory.zero(output) }
            initializedCount = result == 0 ? decodedCount : 0
        }
        guard result == 0 else { throw invalidEncoding(variant) }
        return bytes
    }

    /// Decodes `text` strictly straight into a ``SecureKey``, wiping the intermediate buffer.
    ///
    /// - Throws: A ``SodiumError``: ``SodiumError/Code/invalidEncoding`` if `text` is not strictly valid,
    ///   ``SodiumError/Code/invalidLength`` if it decodes to zero bytes.
    package static func decodeKey(_ text: UnsafeRawBufferPointer, variant: Variant) throws(SodiumError) -> SecureKey {
        let scratch = SecureBuffer(count: maximumDecodedCount(text.count))
        var decodedCount = 0
        // SAFETY: the scratch buffer outlives both closures; only its first decodedCount bytes are copied out.
        let result = scratch.withUnsafeMutableBytes { output in
            decode(text, variant: variant, into: output, decodedCount: &decodedCount)
        }
        guard result == 0 else { throw invalidEncoding(variant) }
        let decoded: Result<SecureKey, SodiumError> = scratch.withUnsafeBytes { bytes in
            Result { () throws(SodiumError) in
                try SecureKey(copying: UnsafeRawBufferPointer(rebasing: bytes[0..<decodedCount]))
            }
        }
        return try decoded.get()
    }

    /// Encodes `bytes` as Base64 text.
    ///
    /// The returned `String` cannot be wiped; encode secrets only for output the user asked for.
    package static func encode(_ bytes: UnsafeRawBufferPointer, variant: Variant) -> String {
        // sodium_base64_encoded_len includes the terminating NUL.
        let length = sodium_base64_encoded_len(bytes.count, variant.sodiumValue)
        return String(unsafeUninitializedCapacity: length) { buffer in
            // SAFETY: `buffer` has `length` writable bytes, enough for the text and its NUL; `bytes` is valid for its
            // count. CChar and UInt8 may alias.
            _ = sodium_bin2base64(
                UnsafeMutableRawBufferPointer(buffer).sodiumMutableChars, length,
                bytes.sodiumBytes, bytes.count, variant.sodiumValue)
            return length - 1
        }
    }

    /// An upper bound of the bytes `count` characters decode to.
    private static func maximumDecodedCount(_ count: Int) -> Int {
        count / 4 * 3 + 3
    }

    /// Runs `sodium_base642bin` with no ignored characters and no end pointer, so the whole text must be consumed.
    private static func decode(
        _ text: UnsafeRawBufferPointer, variant: Variant, into output: UnsafeMutableRawBufferPointer,
        decodedCount: inout Int
    ) -> Int32 {
        // SAFETY: `output` is valid for its count (nonnull; never empty, see maximumDecodedCount) and `text` for its
        // count. utils.h: with `b64_end` NULL, text that is not entirely consumed is an error.
        sodium_base642bin(
            output.sodiumMutableBytes, output.count, text.sodiumChars, text.count, nil, &decodedCount, nil,
            variant.sodiumValue)
    }

    private static func invalidEncoding(_ variant: Variant) -> SodiumError {
        SodiumError(.invalidEncoding, "text is not strictly valid Base64 (\(variant))")
    }
}

/// Lowercase hexadecimal encoding.
package enum Hex {
    /// Encodes `bytes` as lowercase hexadecimal, two characters per byte.
    ///
    /// Branch-free and table-free per nibble (the arithmetic libsodium's `sodium_bin2hex` uses), so timing does not
    /// depend on the values. The returned `String` cannot be wiped.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digit(byte >> 4))
            text.append(digit(byte & 0x0F))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// '0'...'9' for 0...9 and 'a'...'f' for 10...15, without branches.
    private static func digit(_ nibble: UInt8) -> UInt8 {
        let c = UInt32(nibble)
        // c >= 10: (c - 10) >> 8 == 0, leaving 87 + c == 'a' + (c - 10).
        // c < 10: (c - 10) wraps, so the masked term is 0x00FF_FFD9 and the low byte is 87 + 0xD9 + c == 0x130 + c,
        // i.e. '0' + c after truncation.
        return UInt8(truncatingIfNeeded: 87 &+ c &+ (((c &- 10) >> 8) & ~38))
    }
}
