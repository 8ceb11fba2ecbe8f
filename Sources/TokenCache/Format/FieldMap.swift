/// A value in a field map (FORMAT.md §5.3).
enum FieldValue: Equatable {
    /// Type 0x01: UTF-8 text (also used for token material).
    case text([UInt8])
    /// Type 0x02: a signed 64-bit integer (timestamps, in Unix seconds).
    case integer(Int64)
    /// Type 0x03: one JSON value as UTF-8 JSON text (unknown fields that are not strings).
    case json([UInt8])

    static func string(_ value: String) -> FieldValue { .text(Array(value.utf8)) }

    var typeByte: UInt8 {
        switch self {
        case .text: 0x01
        case .integer: 0x02
        case .json: 0x03
        }
    }

    var encodedCount: Int {
        switch self {
        case .text(let bytes), .json(let bytes): bytes.count
        case .integer: 8
        }
    }
}

/// The entity encoding of FORMAT.md §5.3: named, typed fields in strictly ascending bytewise name order.
///
/// Field names are the MSAL wire names (`home_account_id`, `secret`, …), so a reader in any language can
/// map a decoded record to MSAL JSON without this library's model, and unknown fields written by newer
/// or foreign writers are carried through untouched.
struct FieldMap: Equatable {
    static let maximumNameLength = 1024

    /// Keyed by the name's exact UTF-8 bytes: `String` keys would merge canonically equivalent names
    /// (NFC "é" and NFD "e\u{301}") that the format keeps distinct.
    private var fields: [[UInt8]: FieldValue] = [:]

    init() {}

    subscript(name: String) -> FieldValue? {
        get { fields[Array(name.utf8)] }
        set { fields[Array(name.utf8)] = newValue }
    }

    /// The names in canonical (ascending bytewise) order.
    var names: [String] { sortedNames.map { String(decoding: $0, as: UTF8.self) } }

    private var sortedNames: [[UInt8]] {
        fields.keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Bytes needed by ``encode(into:)``.
    var encodedCount: Int {
        fields.reduce(4) { total, field in total + 1 + 2 + field.key.count + 4 + field.value.encodedCount }
    }

    func encode(into writer: inout ByteWriter) {
        let names = sortedNames
        writer.write(bigEndian: UInt32(names.count))
        for name in names {
            let value = fields[name]!
            writer.write(value.typeByte)
            writer.write(bigEndian: UInt16(name.count))
            writer.write(name)
            writer.write(bigEndian: UInt32(value.encodedCount))
            switch value {
            case .text(let bytes), .json(let bytes): writer.write(bytes)
            case .integer(let number): writer.write(bigEndian: number)
            }
        }
    }

    /// Decodes a field map that must extend exactly to the end of `reader`'s bytes.
    static func decode(_ reader: inout ByteReader) throws(FormatError) -> FieldMap {
        let count = try reader.read(UInt32.self, "field count")
        // Each field takes at least 8 bytes: a cheap bound before any allocation.
        guard Int(count) <= reader.remaining / 8 else { throw FormatError("field count \(count) exceeds the record size") }
        var map = FieldMap()
        var previousName: [UInt8]? = nil
        for index in 0..<Int(count) {
            let type = try reader.readByte("field \(index) type")
            let nameLength = Int(try reader.read(UInt16.self, "field \(index) name length"))
            guard nameLength > 0 else { throw FormatError("field \(index) has an empty name") }
            let nameBytes = Array(try reader.read(count: nameLength, "field \(index) name"))
            guard String(validating: nameBytes, as: UTF8.self) != nil else {
                throw FormatError("field \(index) name is not valid UTF-8")
            }
            let name = nameBytes
            if let previousName, !previousName.lexicographicallyPrecedes(nameBytes) {
                throw FormatError("field \(index) is out of order or duplicated")
            }
            previousName = nameBytes
            let valueLength = Int(try reader.read(UInt32.self, "field \(index) value length"))
            let value = try reader.read(count: valueLength, "field \(index) value")
            switch type {
            case 0x01:
                guard String(validating: value, as: UTF8.self) != nil else {
                    throw FormatError("field \(index) text is not valid UTF-8")
                }
                map.fields[name] = .text(Array(value))
            case 0x02:
                guard valueLength == 8 else { throw FormatError("field \(index) integer has length \(valueLength), not 8") }
                map.fields[name] = .integer(Int64(bigEndian: value.loadUnaligned(as: Int64.self)))
            case 0x03:
                guard JSONText.decode(value) != nil else { throw FormatError("field \(index) is not valid JSON") }
                map.fields[name] = .json(Array(value))
            default:
                throw FormatError("field \(index) has unknown type 0x\(String(type, radix: 16))")
            }
        }
        guard reader.isAtEnd else { throw FormatError("\(reader.remaining) trailing bytes after the field map") }
        return map
    }
}
