internal import TokenCache
/// How the values of an MSAL cache entry are read: the spellings and types real caches contain.
///
/// - Timestamps: all five SDKs write a string of integer Unix seconds (`"1700000000"`), but older writers wrote
///   JSON numbers, ObjC writes fractional strings (`"1562842351.202"`), 2019-era Python wrote floats, and .NET's
///   `DateTime.MinValue` is `"-62135596800"`. Accepted: a string `-?digits(.digits)?` or any JSON number. A
///   fraction is truncated toward zero (decided: the model holds whole seconds, and truncation never moves an
///   expiry later than written). A negative value is kept as given (it means "long ago"). Rejected: any other
///   string (empty, spaces, `+`, hex, `NaN`, `Infinity`) and magnitudes of 10^18 seconds or more, which no clock
///   reaches and which would overflow arithmetic on them.
/// - Scope targets: a space-separated string, or (old Python caches) a JSON array of scope strings, joined with
///   single spaces.
/// - Unknown field values: kept as ``JSONValue``; numbers keep their integer-ness (`3` stays an integer, `3.0`
///   a double) so a re-export writes what was read; non-finite numbers (`1e309`) are rejected.
enum MSALFieldValues {
    /// Largest magnitude accepted for a timestamp, exclusive.
    static let timestampLimit: Int64 = 1_000_000_000_000_000_000

    /// The Unix seconds `value` holds, or nil if it is not a timestamp by the rules above.
    static func timestamp(_ value: ResponseJSON) -> Int64? {
        switch value {
        case .string(let bytes): decimalSeconds(bytes, allowExponent: false)
        case .number(let lexeme): decimalSeconds(Array(lexeme.utf8), allowExponent: true)
        default: nil
        }
    }

    /// `-?digits(.digits)?` truncated toward zero, exactly (no rounding through a double); with an exponent (JSON
    /// numbers only) through a double.
    private static func decimalSeconds(_ bytes: [UInt8], allowExponent: Bool) -> Int64? {
        var index = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { index = 1 }
        let integerStart = index
        while index < bytes.count, ResponseJSON.isDigit(bytes[index]) { index += 1 }
        let integerDigits = bytes[integerStart..<index]
        guard !integerDigits.isEmpty else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < bytes.count, ResponseJSON.isDigit(bytes[index]) { index += 1 }
            guard index > fractionStart else { return nil }
        }
        if index < bytes.count {
            guard allowExponent, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E"),
                  let double = Double(String(decoding: bytes, as: UTF8.self)), double.isFinite,
                  abs(double) < Double(timestampLimit)
            else { return nil }
            return Int64(double.rounded(.towardZero))
        }
        let significant = integerDigits.drop { $0 == UInt8(ascii: "0") }
        guard significant.count <= 18 else { return nil }
        var magnitude: Int64 = 0
        for digit in significant { magnitude = magnitude * 10 + Int64(digit - 0x30) }
        return negative ? -magnitude : magnitude
    }

    /// A scope target: a string as is, or an array of strings joined by single spaces. nil for any other type.
    static func target(_ value: ResponseJSON) -> String? {
        switch value {
        case .string(let bytes):
            return String(decoding: bytes, as: UTF8.self)
        case .array(let elements):
            var scopes: [String] = []
            for element in elements {
                guard case .string(let bytes) = element else { return nil }
                scopes.append(String(decoding: bytes, as: UTF8.self))
            }
            return scopes.joined(separator: " ")
        default:
            return nil
        }
    }

    /// A value that cannot be kept as a ``JSONValue``.
    struct UnrepresentableNumber: Error {}

    /// `value` as a ``JSONValue``: integers that fit `Int64` stay integers, other numbers become doubles.
    static func jsonValue(_ value: ResponseJSON) throws(UnrepresentableNumber) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .string(let bytes): return .string(String(decoding: bytes, as: UTF8.self))
        case .number(let lexeme):
            if lexeme.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ResponseJSON.isDigit($0) }), let integer = Int64(lexeme) {
                return .integer(integer)
            }
            guard let double = Double(lexeme), double.isFinite else { throw UnrepresentableNumber() }
            return .double(double)
        case .array(let elements):
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try jsonValue(element)) }
            return .array(values)
        case .object(let members):
            var values: [String: JSONValue] = [:]
            for (name, member) in members { values[name] = try jsonValue(member) }
            return .object(values)
        }
    }
}
