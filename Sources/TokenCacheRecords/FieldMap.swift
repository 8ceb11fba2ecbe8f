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

    /// Bytes needed by ``encodeCompact(into:omittingCredentialType:)``.
    package func compactEncodedCount(omittingCredentialType omitting: Bool = false) -> Int {
        var total = 0, count = 0
        for field in fields where !(omitting && field.name == Self.credentialTypeName) {
            count += 1
            total += 2  // type, id
            if FieldID.id(of: field.name) == nil { total += ByteWriter.varintCount(field.name.count) + field.name.count }
            switch field.value {
            case .integer: total += 8
            case .json(let bytes): total += ByteWriter.varintCount(bytes.count) + bytes.count
            case .text(let bytes):
                let length = Self.segmentedCount(field) ?? bytes.count
                total += ByteWriter.varintCount(length) + length
            }
        }
        return ByteWriter.varintCount(count) + total
    }

    /// The field map of body schema 2 (FORMAT.md §5.3): a one-byte id for each name the format knows, varint lengths,
    /// and the `secret` field as segmented text (type 0x04: a JWT's segments decoded from base64url).
    /// `omittingCredentialType`: a record body leaves out `credential_type`, which its database names.
    package func encodeCompact(into writer: inout ByteWriter, omittingCredentialType omitting: Bool = false) {
        let included = omitting ? fields.lazy.filter { $0.name != Self.credentialTypeName }.count : fields.count
        writer.write(varint: included)
        for field in fields where !(omitting && field.name == Self.credentialTypeName) {
            let id = FieldID.id(of: field.name)
            let segmented = Self.segmentedCount(field)
            writer.write(segmented != nil ? FieldType.segmentedText : field.value.typeByte)
            writer.write(id ?? 0)
            if id == nil {
                writer.write(varint: field.name.count)
                writer.write(field.name)
            }
            switch field.value {
            case .integer(let number):
                writer.write(bigEndian: number)
            case .json(let bytes):
                writer.write(varint: bytes.count)
                writer.write(bytes)
            case .text(let bytes):
                bytes.withUnsafeBytes { text in
                    if let segmented {
                        writer.write(varint: segmented)
                        SegmentedText.encode(text, into: &writer)
                    } else {
                        writer.write(varint: text.count)
                        writer.write(text)
                    }
                }
            }
        }
    }

    /// The bytes of a field's value written as segmented text, or nil when it is not: only a token's `secret`, the one
    /// field whose text is large and, for a JWT, mostly base64url. (Its length is the answer, not a yes: finding it
    /// scans the token, which the writer then need not do again.)
    private static func segmentedCount(_ field: Field) -> Int? {
        guard case .text(let text) = field.value, field.name == secretName else { return nil }
        let count = text.withUnsafeBytes(SegmentedText.encodedCount)
        // Only when it is the shorter: a text of many long segments that are not base64url would grow (a segment's
        // header can take two bytes where a dot took one).
        return count < text.count ? count : nil
    }

    private static let secretName = Array("secret".utf8)
    private static let credentialTypeName = Array("credential_type".utf8)

    /// Decodes a field map of the given body schema (1: §5.3's named fields, also the summary's; 2: compact) that must
    /// extend exactly to the end of `reader`'s bytes.
    package static func decode(_ reader: inout ByteReader, schema: UInt8 = FieldType.namedSchema) throws(FormatError) -> FieldMap {
        try FieldTable(reading: &reader, schema: schema).fieldMap
    }
}

/// Type bytes and schema numbers of field maps (FORMAT.md §5.3).
package enum FieldType {
    package static let text: UInt8 = 0x01
    package static let integer: UInt8 = 0x02
    package static let json: UInt8 = 0x03
    /// Body schema 2 only: text kept as segments, base64url ones decoded (``SegmentedText``).
    package static let segmentedText: UInt8 = 0x04

    /// Body schema 1 (and every summary): each field's name written out.
    package static let namedSchema: UInt8 = 0x01
    /// Body schema 2: field ids, varint lengths, segmented text.
    package static let compactSchema: UInt8 = 0x02
}

/// A decoded field map read in place: validated byte ranges over the plaintext.
///
/// Reading a record builds one small array of entries, with no hashing and no copy of any value; a field's bytes
/// are copied once, straight into the `String` or ``Secret`` the entity keeps.
///
/// The plaintext is borrowed: readers decrypt into a temporary buffer that is wiped when its closure returns, and
/// a table over it is valid only inside that closure (``RecordStore/withBody(_:key:database:_:)``). Entities copy
/// what they keep, so nothing outlives it.
///
/// Both encodings of FORMAT.md §5.3 read into the same table: a field's name points into the plaintext (schema 1, and
/// schema 2's named fields) or at the static name of its id (schema 2).
package struct FieldTable {
    package struct Entry {
        package var type: UInt8
        /// The field's name: bytes of the plaintext, or of the static string its id names.
        package var name: UnsafeRawBufferPointer
        package var value: Range<Int>
    }

    @usableFromInline let bytes: UnsafeRawBufferPointer
    package let entries: [Entry]

    /// Parses the field map that starts at `offset` of `bytes`, in the encoding of body `schema`: the table is valid
    /// only while `bytes` is.
    @inlinable
    package init(borrowing bytes: UnsafeRawBufferPointer, offset: Int, schema: UInt8 = FieldType.namedSchema) throws(FormatError) {
        var reader = ByteReader(bytes)
        _ = try reader.read(count: offset, "record header")
        try self.init(reading: &reader, schema: schema)
    }

    /// Parses the field map from `reader`'s position to the end of its bytes.
    @inlinable
    package init(reading reader: inout ByteReader, schema: UInt8) throws(FormatError) {
        self.entries = schema == FieldType.compactSchema ? try Self.parseCompact(&reader) : try Self.parse(&reader)
        self.bytes = reader.bytes
    }

    /// Validates a field map of schema 1 (FORMAT.md §5.3) and returns where each field lies in `reader.bytes`.
    @inlinable
    package static func parse(_ reader: inout ByteReader) throws(FormatError) -> [Entry] {
        var entries: [Entry] = []
        try forEachEntry(&reader, reserving: { entries.reserveCapacity($0) }) { entries.append($0) }
        return entries
    }

    /// Validates a field map of schema 2 (FORMAT.md §5.3) and returns where each field lies in `reader.bytes`.
    @inlinable
    package static func parseCompact(_ reader: inout ByteReader) throws(FormatError) -> [Entry] {
        var entries: [Entry] = []
        try forEachCompactEntry(&reader, reserving: { entries.reserveCapacity($0) }) { entries.append($0) }
        return entries
    }

    /// Validates a field map of schema 1 (FORMAT.md §5.3) entry by entry, handing each to `body` as soon as it is
    /// checked: a reader that needs a few fields (a lookup summary) picks them without building a table. The map is
    /// valid only if this returns normally, so callers act on what they picked only then.
    @inlinable
    package static func forEachEntry(
        _ reader: inout ByteReader, reserving reserve: (Int) -> Void = { _ in }, _ body: (Entry) throws(FormatError) -> Void
    ) throws(FormatError) {
        let count = try reader.read(UInt32.self, "field count")
        // Each field takes at least 8 bytes: a cheap bound before any allocation.
        guard Int(count) <= reader.remaining / 8 else { throw FormatError("field count \(count) exceeds the record size") }
        reserve(Int(count))
        var previousName: UnsafeRawBufferPointer? = nil
        for index in 0..<Int(count) {
            let type = try reader.readByte("field \(index) type")
            let nameLength = Int(try reader.read(UInt16.self, "field \(index) name length"))
            guard nameLength > 0 else { throw FormatError("field \(index) has an empty name") }
            let name = try reader.read(count: nameLength, "field \(index) name")
            guard isValidUTF8(name) else { throw FormatError("field \(index) name is not valid UTF-8") }
            if let previousName, Self.compare(previousName, name) >= 0 {
                throw FormatError("field \(index) is out of order or duplicated")
            }
            previousName = name
            let valueLength = Int(try reader.read(UInt32.self, "field \(index) value length"))
            let valueStart = reader.position
            let value = try reader.read(count: valueLength, "field \(index) value")
            switch type {
            case FieldType.text:
                guard isValidUTF8(value) else { throw FormatError("field \(index) text is not valid UTF-8") }
            case FieldType.integer:
                guard valueLength == 8 else { throw FormatError("field \(index) integer has length \(valueLength), not 8") }
            case FieldType.json:
                guard JSONSyntax.isValid(value) else { throw FormatError("field \(index) is not valid JSON") }
            default:
                throw FormatError("field \(index) has unknown type 0x\(String(type, radix: 16))")
            }
            try body(Entry(type: type, name: name, value: valueStart..<(valueStart + valueLength)))
        }
        guard reader.isAtEnd else { throw FormatError("\(reader.remaining) trailing bytes after the field map") }
    }

    /// ``forEachEntry(_:reserving:_:)`` for a field map of schema 2: `varint count ‖ field × count`, each field
    /// `u8 type ‖ u8 id ‖ [id 0: varint len ‖ name] ‖ value` (an integer's 8 bytes, else `varint len ‖ bytes`).
    @inlinable
    package static func forEachCompactEntry(
        _ reader: inout ByteReader, reserving reserve: (Int) -> Void = { _ in }, _ body: (Entry) throws(FormatError) -> Void
    ) throws(FormatError) {
        let count = try reader.readVarint("field count")
        // Each field takes at least 3 bytes: a cheap bound before any allocation.
        guard count <= reader.remaining / 3 else { throw FormatError("field count \(count) exceeds the record size") }
        reserve(count)
        var previousName: UnsafeRawBufferPointer? = nil
        for index in 0..<count {
            let type = try reader.readByte("field \(index) type")
            let id = try reader.readByte("field \(index) id")
            let name: UnsafeRawBufferPointer
            if id == 0 {
                let nameLength = try reader.readVarint("field \(index) name length")
                guard nameLength > 0 else { throw FormatError("field \(index) has an empty name") }
                name = try reader.read(count: nameLength, "field \(index) name")
                guard isValidUTF8(name) else { throw FormatError("field \(index) name is not valid UTF-8") }
                guard FieldID.id(of: name) == nil else { throw FormatError("field \(index) spells out a name that has an id") }
            } else {
                guard let known = FieldID.name(id) else { throw FormatError("field \(index) has unknown id \(id)") }
                name = known.utf8
            }
            if let previousName, Self.compare(previousName, name) >= 0 {
                throw FormatError("field \(index) is out of order or duplicated")
            }
            previousName = name
            let valueStart: Int, valueLength: Int
            if type == FieldType.integer {
                valueStart = reader.position
                valueLength = 8
                _ = try reader.read(count: 8, "field \(index) integer")
            } else {
                valueLength = try reader.readVarint("field \(index) value length")
                valueStart = reader.position
                let value = try reader.read(count: valueLength, "field \(index) value")
                switch type {
                case FieldType.text:
                    guard isValidUTF8(value) else { throw FormatError("field \(index) text is not valid UTF-8") }
                case FieldType.json:
                    guard JSONSyntax.isValid(value) else { throw FormatError("field \(index) is not valid JSON") }
                case FieldType.segmentedText:
                    guard id == FieldID.secret else { throw FormatError("field \(index) is segmented text but not the secret") }
                    _ = try SegmentedText.textCount(ofValue: value)
                default:
                    throw FormatError("field \(index) has unknown type 0x\(String(type, radix: 16))")
                }
            }
            try body(Entry(type: type, name: name, value: valueStart..<(valueStart + valueLength)))
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
            let order = Self.compare(entries[middle].name, wanted)
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
        let entryName = entries[index].name
        // A name of the id table and a static string of the same name are often the same bytes of the binary.
        if entryName.baseAddress == UnsafeRawPointer(name.utf8Start), entryName.count == name.utf8CodeUnitCount { return 0 }
        return Self.compare(entryName, name.utf8)
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

    @inlinable package func name(at index: Int) -> String { String(decoding: entries[index].name, as: UTF8.self) }

    /// Whether entry `index` holds text (type 0x01, or 0x04: segmented).
    @inlinable @inline(__always) package func isText(at index: Int) -> Bool {
        let type = entries[index].type
        return type == FieldType.text || type == FieldType.segmentedText
    }

    /// The text of entry `index` (type 0x01 or 0x04).
    @inlinable package func string(at index: Int) -> String {
        guard entries[index].type == FieldType.segmentedText else { return String(decoding: self[entries[index].value], as: UTF8.self) }
        let count = textCount(at: index)
        return String(unsafeUninitializedCapacity: count) { output in
            writeText(at: index, into: UnsafeMutableRawBufferPointer(output))
            return count
        }
    }

    /// Whether the text of entry `index` is exactly the UTF-8 of `text`.
    @inlinable @inline(__always) package func value(at index: Int, equals text: String) -> Bool {
        // Bytes, not `String ==` (which would equate canonically equivalent spellings).
        guard entries[index].type != FieldType.segmentedText else { return string(at: index).utf8.elementsEqual(text.utf8) }
        let value = self[entries[index].value]
        var text = text
        return text.withUTF8 { $0.count == value.count && ($0.isEmpty || memcmp($0.baseAddress!, value.baseAddress!, $0.count) == 0) }
    }

    @inlinable @inline(__always) package func integer(at index: Int) -> Int64 {
        Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: entries[index].value.lowerBound, as: Int64.self))
    }

    /// The bytes of entry `index`'s value as stored, borrowed like the table (for text of type 0x01 and JSON: a reader
    /// copies what it keeps; a token goes straight into a zeroizing buffer, with no `String` in between).
    @inlinable @inline(__always) package func value(at index: Int) -> UnsafeRawBufferPointer { self[entries[index].value] }

    /// The length of the text of entry `index` (type 0x01 or 0x04).
    @inlinable package func textCount(at index: Int) -> Int {
        let value = self[entries[index].value]
        guard entries[index].type == FieldType.segmentedText else { return value.count }
        return SegmentedText.textCount(ofValidatedValue: value)
    }

    /// Writes the text of entry `index` (type 0x01 or 0x04) into `output`, which holds ``textCount(at:)`` bytes.
    @inlinable package func writeText(at index: Int, into output: UnsafeMutableRawBufferPointer) {
        let value = self[entries[index].value]
        if entries[index].type == FieldType.segmentedText {
            SegmentedText.writeText(ofValue: value, into: output)
        } else if !value.isEmpty {
            output.baseAddress!.copyMemory(from: value.baseAddress!, byteCount: value.count)
        }
    }

    /// The whole table as a ``FieldMap`` (tests, generic tooling, transcoding): segmented text becomes its text.
    package var fieldMap: FieldMap {
        var map = FieldMap()
        for index in entries.indices {
            let entry = entries[index]
            switch entry.type {
            case FieldType.text: map[name(at: index)] = .text(Array(self[entry.value]))
            case FieldType.segmentedText: map[name(at: index)] = .text(Array(string(at: index).utf8))
            case FieldType.integer: map[name(at: index)] = .integer(integer(at: index))
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
