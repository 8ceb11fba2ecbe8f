/// Builds an entity's field map: modelled fields first, then the preserved unknown ones.
package struct FieldEncoder {
    package private(set) var map = FieldMap()

    package init() {}

    /// Sets a field unless the map already has one of that name (modelled fields are set first and win).
    package mutating func setIfAbsent(_ name: String, _ value: FieldValue) {
        if map[name] == nil { map[name] = value }
    }

    package mutating func set(_ name: String, _ value: String?) {
        if let value { map[name] = .string(value) }
    }

    package mutating func set(_ name: String, _ value: Int64?) {
        if let value { map[name] = .integer(value) }
    }

    /// A text field from raw UTF-8 bytes (token material, which never becomes a `String`).
    package mutating func set(_ name: String, text bytes: UnsafeRawBufferPointer) {
        map[name] = .text(Array(bytes))
    }
}

/// Reads an entity's modelled fields out of a decoded field table; what is left becomes `additionalFields`.
///
/// Field names are static strings (the model's wire names). Each is looked for first where the previous one ended
/// (readers that ask in name order find every field there), then by binary search over the table's sorted names.
/// Which entries were taken is a bit set (records have a dozen fields; an array backs maps of more than 64).
package struct FieldDecoder {
    /// The table being read, for readers that extend the decoder (the model's secrets and unknown fields).
    package let table: FieldTable
    @usableFromInline var consumedBits: UInt64 = 0
    @usableFromInline var consumedBeyond64: [Bool]
    /// What the record is (an MSAL section name such as `AccessToken`), for error messages.
    package let kind: String

    @inlinable package init(_ table: FieldTable, kind: String) {
        self.table = table
        consumedBeyond64 = table.entries.count > 64 ? [Bool](repeating: false, count: table.entries.count - 64) : []
        self.kind = kind
    }

    @inlinable @inline(__always) mutating func markConsumed(_ index: Int) {
        if index < 64 { consumedBits |= 1 << UInt64(index) } else { consumedBeyond64[index - 64] = true }
    }

    @inlinable package func isConsumed(_ index: Int) -> Bool {
        index < 64 ? consumedBits & (1 << UInt64(index)) != 0 : consumedBeyond64[index - 64]
    }

    /// The entry after the last one taken: a reader that asks for fields in name order finds each one here, with
    /// one comparison instead of a binary search.
    @usableFromInline var next = 0

    /// The entry named `name`, marked consumed; nil when absent.
    @inlinable @inline(__always) mutating func consume(_ name: StaticString) -> Int? {
        let index: Int
        let count = table.entries.count
        let order = next < count ? table.compareName(at: next, with: name) : 1
        if order == 0 {
            index = next
        } else if order > 0 && (next == 0 || table.compareName(at: next - 1, with: name) < 0) {
            // Between two neighbours in name order (names are strictly ascending), or past the last: absent. An
            // optional field a record lacks costs two comparisons, not a search.
            return nil
        } else if let found = table.index(of: name) {
            index = found
        } else {
            return nil
        }
        next = index + 1
        markConsumed(index)
        return index
    }

    /// The entry named `name` of the given type (0x01 text, 0x02 integer, 0x03 JSON), marked consumed; nil when absent.
    @inlinable @inline(__always) package mutating func take(_ name: StaticString, type: UInt8, _ what: String) throws(FormatError) -> Int? {
        guard let index = consume(name) else { return nil }
        let stored = table.entries[index].type
        // Text is text in either form (segmented: body schema 2's token).
        guard stored == type || (type == FieldType.text && stored == FieldType.segmentedText) else {
            throw FormatError("\(kind) field '\(name)' is not \(what)")
        }
        return index
    }

    @inlinable @inline(__always) package mutating func string(_ name: StaticString) throws(FormatError) -> String {
        try string(name, reusing: nil)
    }

    /// ``string(_:)``, but `known` itself when the stored bytes are exactly its UTF-8: a lookup already holds the
    /// account, host, client and realm it asked for, and sharing them saves an allocation and a copy per field.
    @inlinable @inline(__always) package mutating func string(_ name: StaticString, reusing known: String?) throws(FormatError) -> String {
        guard let index = try take(name, type: 0x01, "text") else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        if let known, table.value(at: index, equals: known) { return known }
        return table.string(at: index)
    }

    @inlinable @inline(__always) package mutating func optionalString(_ name: StaticString) throws(FormatError) -> String? {
        guard let index = try take(name, type: 0x01, "text") else { return nil }
        return table.string(at: index)
    }

    @inlinable @inline(__always) package mutating func integer(_ name: StaticString) throws(FormatError) -> Int64 {
        guard let value = try optionalInteger(name) else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        return value
    }

    @inlinable @inline(__always) package mutating func optionalInteger(_ name: StaticString) throws(FormatError) -> Int64? {
        guard let index = try take(name, type: 0x02, "an integer") else { return nil }
        return table.integer(at: index)
    }

    /// `credential_type` is implied by the database; it is consumed (not carried as unknown) and ignored.
    @inlinable @inline(__always) package mutating func consumeCredentialType() {
        _ = consume("credential_type")
    }
}

