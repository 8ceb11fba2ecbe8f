/// A JSON value as read from a token-endpoint response, a JWT payload or `client_info`.
///
/// A dedicated strict reader rather than Foundation's decoder, for four reasons: numbers keep their lexeme (so
/// `3600`, `"3600"` and `1e309` can be told apart and judged field by field instead of failing or silently
/// rounding); strings stay UTF-8 bytes (a token goes straight into a ``Secret`` without an intermediate `String`);
/// duplicate member names are rejected (two `access_token` members must not be resolved by parser accident); and
/// nesting depth is bounded. Failures carry a byte offset and a fixed reason, never any of the input.
package indirect enum ResponseJSON: Equatable {
    case null
    case bool(Bool)
    /// The number exactly as written (RFC 8259 §6 grammar, already checked).
    case number(String)
    /// UTF-8 bytes, escapes resolved, validated as UTF-8.
    case string([UInt8])
    case array([ResponseJSON])
    case object([String: ResponseJSON])

    /// Why a text is not JSON: a fixed phrase and where. Deliberately carries none of the input.
    package struct SyntaxError: Error, Equatable {
        package var offset: Int
        package var reason: String
    }

    /// Nesting deeper than this is rejected (token responses are flat; this bounds recursion).
    package static let maximumDepth = 32

    /// Parses exactly one JSON value surrounded by optional whitespace. A leading UTF-8 BOM is skipped.
    package static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> ResponseJSON {
        var reader = Reader(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.index = 3 }
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.failure("unexpected data after the JSON value") }
        return value
    }

    var stringValue: String? {
        if case .string(let bytes) = self { String(decoding: bytes, as: UTF8.self) } else { nil }
    }

    var objectValue: [String: ResponseJSON]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The value of an integral JSON number (`3600`, `3600.0`, `3.6e3`); nil for fractions, non-finite
    /// values (`1e309`) and values outside ±2^53 when written with a fraction or exponent.
    static func integer(fromLexeme lexeme: String) -> Int64? {
        if lexeme.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || isDigit($0) }) { return Int64(lexeme) }
        guard let value = Double(lexeme), value.isFinite, value.rounded(.towardZero) == value,
              abs(value) <= 9_007_199_254_740_992 else { return nil }
        return Int64(value)
    }

    /// The value of a numeric string as some servers (ADFS, AAD v1) send them: optional `-`, then 1–18 digits.
    static func integer(fromNumericString bytes: [UInt8]) -> Int64? {
        let digits = bytes.first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy(isDigit) else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }

    package static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        func failure(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8, _ reason: String) throws(SyntaxError) {
            guard current == byte else { throw failure(reason) }
            index += 1
        }

        mutating func value(depth: Int) throws(SyntaxError) -> ResponseJSON {
            guard let byte = current else { throw failure("unexpected end of input") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), 0x30...0x39: return .number(try number())
            default: throw failure("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, bytes[index..<(index + expected.count)].elementsEqual(expected) else {
                throw failure("invalid literal")
            }
            index += expected.count
        }

        mutating func object(depth: Int) throws(SyntaxError) -> ResponseJSON {
            guard depth <= ResponseJSON.maximumDepth else { throw failure("nesting too deep") }
            index += 1  // {
            var members: [String: ResponseJSON] = [:]
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
                let nameOffset = index
                let name = String(decoding: try string(), as: UTF8.self)
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "expected ':' after a member name")
                skipWhitespace()
                let member = try value(depth: depth)
                guard members.updateValue(member, forKey: name) == nil else {
                    throw SyntaxError(offset: nameOffset, reason: "duplicate member name")
                }
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> ResponseJSON {
            guard depth <= ResponseJSON.maximumDepth else { throw failure("nesting too deep") }
            index += 1  // [
            var elements: [ResponseJSON] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth))
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
                return .array(elements)
            }
        }

        mutating func string() throws(SyntaxError) -> [UInt8] {
            let start = index
            index += 1  // opening quote
            var result: [UInt8] = []
            while true {
                guard let byte = current else { throw failure("unterminated string") }
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    guard Self.isValidUTF8(result) else { throw SyntaxError(offset: start, reason: "string is not valid UTF-8") }
                    return result
                case UInt8(ascii: "\\"):
                    index += 1
                    try escape(into: &result)
                case 0x00..<0x20:
                    throw failure("control character in a string")
                default:
                    result.append(byte)
                    index += 1
                }
            }
        }

        mutating func escape(into result: inout [UInt8]) throws(SyntaxError) {
            guard let byte = current else { throw failure("unterminated string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(byte)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(try hex4())
                if (0xD800...0xDBFF).contains(scalar) {
                    guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                        throw failure("unpaired surrogate escape")
                    }
                    index += 2
                    let low = UInt32(try hex4())
                    guard (0xDC00...0xDFFF).contains(low) else { throw failure("unpaired surrogate escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("unpaired surrogate escape")
                }
                // Always a scalar: surrogates were paired or rejected above.
                guard let unicodeScalar = Unicode.Scalar(scalar) else { throw failure("invalid \\u escape") }
                Unicode.UTF8.encode(unicodeScalar) { result.append($0) }
            default:
                throw failure("invalid escape")
            }
        }

        mutating func hex4() throws(SyntaxError) -> UInt16 {
            guard bytes.count - index >= 4 else { throw failure("invalid \\u escape") }
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x41...0x46: digit = byte - 0x41 + 10
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: throw failure("invalid \\u escape")
                }
                value = value << 4 | UInt16(digit)
                index += 1
            }
            return value
        }

        /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() throws(SyntaxError) -> String {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, ResponseJSON.isDigit(first) else { throw failure("invalid number") }
            index += 1
            if first != 0x30 { skipDigits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard let byte = current, ResponseJSON.isDigit(byte) else { throw failure("invalid number") }
                skipDigits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, ResponseJSON.isDigit(byte) else { throw failure("invalid number") }
                skipDigits()
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func skipDigits() {
            while let byte = current, ResponseJSON.isDigit(byte) { index += 1 }
        }

        static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = bytes.makeIterator()
            while true {
                switch parser.parseScalar(from: &iterator) {
                case .valid: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }
}
