internal import TokenCacheSodium

#if canImport(Glibc)
import Glibc
#endif

/// A value in a field map (FORMAT.md §5.3).
package enum FieldValue: Equatable {
    /// Type 0x01: UTF-8 text (also used for token material).
    case text([UInt8])
    /// Type 0x02: a signed 64-bit integer (timestamps, in Unix seconds).
    case integer(Int64)
    /// Type 0x03: one JSON value as UTF-8 JSON text (unknown fields that are not strings).
    case json([UInt8])

    package static func string(_ value: String) -> FieldValue { .text(Array(value.utf8)) }

    package var typeByte: UInt8 {
        switch self {
        case .text: 0x01
        case .integer: 0x02
        case .json: 0x03
        }
    }

    package var encodedCount: Int {
        switch self {
        case .text(let bytes), .json(let bytes): bytes.count
        case .integer: 8
        }
    }
}

/// The entity encoding of FORMAT.md §5.3, as a value to build and encode: named, typed fields in strictly
/// ascending bytewise name order.
///
/// Field names are the MSAL wire names (`home_account_id`, `secret`, …), so a reader in any language can
/// map a decoded record to MSAL JSON without this library's model, and unknown fields written by newer
/// or foreign writers are carried through untouched. Names are kept and compared as bytes: `String`
/// equality would merge canonically equivalent names (NFC "é" and NFD "e\u{301}") that the format keeps apart.
package struct FieldMap: Equatable {
    package struct Field: Equatable {
        package var name: [UInt8]
        package var value: FieldValue
    }

    package static let maximumNameLength = 1024

    /// Sorted by name bytes; at most one field per name.
    package private(set) var fields: [Field] = []

    package init() {}

    private func position(of name: some Collection<UInt8>) -> (found: Bool, index: Int) {
        var low = 0, high = fields.count
        while low < high {
            let middle = (low + high) / 2
            if fields[middle].name.lexicographicallyPrecedes(name) { low = middle + 1 } else { high = middle }
        }
        return (low < fields.count && fields[low].name.elementsEqual(name), low)
    }

    package subscript(name: String) -> FieldValue? {
        get {
            let (found, index) = position(of: name.utf8)
            return found ? fields[index].value : nil
        }
        set {
            let (found, index) = position(of: name.utf8)
            switch (found, newValue) {
            case (true, let value?): fields[index].value = value
            case (true, nil): fields.remove(at: index)
            case (false, let value?): fields.insert(Field(name: Array(name.utf8), value: value), at: index)
            case (false, nil): break
            }
        }
    }

    /// The names in canonical (ascending bytewise) order.
    package var names: [String] { fields.map { String(decoding: $0.name, as: UTF8.self) } }

    /// Bytes needed by ``encode(into:)``.
    package var encodedCount: Int {
        fields.reduce(4) { total, field in total + 1 + 2 + field.name.count + 4 + field.value.encodedCount }
    }

    package func encode(into writer: inout ByteWriter) {
        writer.write(bigEndian: UInt32(fields.count))
        for field in fields {
            writer.write(field.value.typeByte)
            writer.write(bigEndian: UInt16(field.name.count))
            writer.write(field.name)
            writer.write(bigEndian: UInt32(field.value.encodedCount))
            switch field.value {
            case .text(let bytes), .json(let bytes): writer.write(bytes)
            case .integer(let number): writer.write(bigEndian: number)
            }
        }
    }

    /// Decodes a field map that must extend exactly to the end of `reader`'s bytes.
    package static func decode(_ reader: inout ByteReader) throws(FormatError) -> FieldMap {
        let entries = try FieldTable.parse(&reader)
        var map = FieldMap()
        map.fields = entries.map { entry in
            let name = Array(reader.bytes[entry.name])
            let value = reader.bytes[entry.value]
            switch entry.type {
            case 0x01: return Field(name: name, value: .text(Array(value)))
            case 0x02: return Field(name: name, value: .integer(Int64(bigEndian: UnsafeRawBufferPointer(rebasing: value).loadUnaligned(as: Int64.self))))
            default: return Field(name: name, value: .json(Array(value)))
            }
        }
        return map
    }
}

/// A decoded field map read in place: validated byte ranges over the plaintext.
///
/// Reading a record builds one small array of ranges, with no hashing and no copy of any value; a field's bytes
/// are copied once, straight into the `String` or ``Secret`` the entity keeps.
///
/// The plaintext is borrowed: readers decrypt into a temporary buffer that is wiped when its closure returns, and
/// a table over it is valid only inside that closure (``RecordStore/withBody(_:key:database:_:)``). Entities copy
/// what they keep, so nothing outlives it.
package struct FieldTable {
    package struct Entry {
        package var type: UInt8
        package var name: Range<Int>
        package var value: Range<Int>
    }

    @usableFromInline let bytes: UnsafeRawBufferPointer
    package let entries: [Entry]

    /// Parses the field map that starts at `offset` of `bytes`: the table is valid only while `bytes` is.
    @inlinable
    package init(borrowing bytes: UnsafeRawBufferPointer, offset: Int) throws(FormatError) {
        var reader = ByteReader(bytes)
        _ = try reader.read(count: offset, "record header")
        self.entries = try Self.parse(&reader)
        self.bytes = bytes
    }

    /// Validates a field map (FORMAT.md §5.3) and returns where each field lies in `reader.bytes`.
    @inlinable
    package static func parse(_ reader: inout ByteReader) throws(FormatError) -> [Entry] {
        var entries: [Entry] = []
        try forEachEntry(&reader, reserving: { entries.reserveCapacity($0) }) { entries.append($0) }
        return entries
    }

    /// Validates a field map (FORMAT.md §5.3) entry by entry, handing each to `body` as soon as it is checked: a
    /// reader that needs a few fields (a lookup summary) picks them without building a table. The map is valid only
    /// if this returns normally, so callers act on what they picked only then.
    @inlinable
    package static func forEachEntry(
        _ reader: inout ByteReader, reserving reserve: (Int) -> Void = { _ in }, _ body: (Entry) throws(FormatError) -> Void
    ) throws(FormatError) {
        let count = try reader.read(UInt32.self, "field count")
        // Each field takes at least 8 bytes: a cheap bound before any allocation.
        guard Int(count) <= reader.remaining / 8 else { throw FormatError("field count \(count) exceeds the record size") }
        reserve(Int(count))
        var previousName: Range<Int>? = nil
        for index in 0..<Int(count) {
            let type = try reader.readByte("field \(index) type")
            let nameLength = Int(try reader.read(UInt16.self, "field \(index) name length"))
            guard nameLength > 0 else { throw FormatError("field \(index) has an empty name") }
            let nameStart = reader.position
            let name = try reader.read(count: nameLength, "field \(index) name")
            guard isValidUTF8(name) else { throw FormatError("field \(index) name is not valid UTF-8") }
            let nameRange = nameStart..<(nameStart + nameLength)
            if let previousName, Self.compare(UnsafeRawBufferPointer(rebasing: reader.bytes[previousName]), name) >= 0 {
                throw FormatError("field \(index) is out of order or duplicated")
            }
            previousName = nameRange
            let valueLength = Int(try reader.read(UInt32.self, "field \(index) value length"))
            let valueStart = reader.position
            let value = try reader.read(count: valueLength, "field \(index) value")
            switch type {
            case 0x01:
                guard isValidUTF8(value) else { throw FormatError("field \(index) text is not valid UTF-8") }
            case 0x02:
                guard valueLength == 8 else { throw FormatError("field \(index) integer has length \(valueLength), not 8") }
            case 0x03:
                guard JSONSyntax.isValid(value) else { throw FormatError("field \(index) is not valid JSON") }
            default:
                throw FormatError("field \(index) has unknown type 0x\(String(type, radix: 16))")
            }
            try body(Entry(type: type, name: nameRange, value: valueStart..<(valueStart + valueLength)))
        }
        guard reader.isAtEnd else { throw FormatError("\(reader.remaining) trailing bytes after the field map") }
    }

    /// The index of the entry named `name`, compared as bytes. Names are in strictly ascending bytewise order
    /// (checked when the table was built), so this is a binary search.
    @inlinable package func index(of name: StaticString) -> Int? {
        let wanted = name.utf8
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = Self.compare(self[entries[middle].name], wanted)
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Whether entry `index` is named `name`.
    @inlinable @inline(__always) package func name(at index: Int, equals name: StaticString) -> Bool {
        compareName(at: index, with: name) == 0
    }

    /// The bytewise order of entry `index`'s name and `name`: negative, zero or positive.
    @inlinable @inline(__always) package func compareName(at index: Int, with name: StaticString) -> Int {
        Self.compare(self[entries[index].name], name.utf8)
    }

    /// Bytewise order of two names: negative, zero or positive (then the shorter first). An inline loop, not
    /// `memcmp`: names are a few bytes that mostly differ in the first one, where the call costs more than the work.
    @inlinable @inline(__always) static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Int {
        for index in 0..<min(lhs.count, rhs.count) where lhs[index] != rhs[index] {
            return Int(lhs[index]) - Int(rhs[index])
        }
        return lhs.count - rhs.count
    }

    @inlinable @inline(__always) subscript(range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

    @inlinable package func name(at index: Int) -> String { String(decoding: self[entries[index].name], as: UTF8.self) }

    @inlinable package func string(at index: Int) -> String { String(decoding: self[entries[index].value], as: UTF8.self) }

    /// Whether the value of entry `index` is exactly the UTF-8 of `text`.
    @inlinable @inline(__always) package func value(at index: Int, equals text: String) -> Bool {
        let value = self[entries[index].value]
        var text = text
        return text.withUTF8 { $0.count == value.count && ($0.isEmpty || memcmp($0.baseAddress!, value.baseAddress!, $0.count) == 0) }
    }

    @inlinable @inline(__always) package func integer(at index: Int) -> Int64 {
        Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: entries[index].value.lowerBound, as: Int64.self))
    }

    /// The bytes of entry `index`'s value, borrowed like the table: a reader copies what it keeps (a token goes
    /// straight into a zeroizing buffer, with no `String` in between).
    @inlinable @inline(__always) package func value(at index: Int) -> UnsafeRawBufferPointer { self[entries[index].value] }

    /// The whole table as a ``FieldMap`` (tests, generic tooling).
    package var fieldMap: FieldMap {
        var map = FieldMap()
        for index in entries.indices {
            let entry = entries[index]
            switch entry.type {
            case 0x01: map[name(at: index)] = .text(Array(self[entry.value]))
            case 0x02: map[name(at: index)] = .integer(integer(at: index))
            default: map[name(at: index)] = .json(Array(self[entry.value]))
            }
        }
        return map
    }
}

/// UTF-8 validity without building a `String`: ASCII (the common case: identifiers, tokens) is checked byte by
/// byte; anything else goes through the standard library's validating initializer.
package func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    if isASCII(bytes) { return true }
    return String(validating: bytes, as: UTF8.self) != nil
}

/// Whether every byte is below 0x80, eight bytes at a time (tokens are kilobytes of ASCII).
private func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let words = bytes.count / 8
    var high: UInt64 = 0
    for index in 0..<words { high |= bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) }
    for index in (words * 8)..<bytes.count { high |= UInt64(bytes[index]) }
    return high & 0x8080_8080_8080_8080 == 0
}
