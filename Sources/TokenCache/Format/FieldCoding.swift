/// Builds an entity's field map: modelled fields first, then the preserved unknown ones.
struct FieldEncoder {
    private(set) var map = FieldMap()

    mutating func set(_ name: String, _ value: String?) {
        if let value { map[name] = .string(value) }
    }

    mutating func set(_ name: String, _ value: Int64?) {
        if let value { map[name] = .integer(value) }
    }

    mutating func set(_ name: String, _ secret: Secret) {
        map[name] = .text(secret.withUnsafeBytes { Array($0) })
    }

    /// The fields every credential (access, refresh and ID token) starts with.
    mutating func setCredential(_ type: String, homeAccountID: String, environment: String, clientID: String, secret: Secret) {
        set("credential_type", type)
        set("home_account_id", homeAccountID)
        set("environment", environment)
        set("client_id", clientID)
        set("secret", secret)
    }

    /// Unknown fields: strings stay text, everything else is stored as JSON text.
    mutating func merge(_ additional: [String: JSONValue]) {
        for (name, value) in additional where map[name] == nil {
            if case .string(let text) = value {
                map[name] = .string(text)
            } else {
                map[name] = .json(Array(JSONText.encode(value).utf8))
            }
        }
    }
}

/// Reads an entity's modelled fields out of a decoded field table; what is left becomes `additionalFields`.
///
/// Field names are static strings (the model's wire names). Each is looked for first where the previous one ended
/// (readers that ask in name order find every field there), then by binary search over the table's sorted names.
/// Which entries were taken is a bit set (records have a dozen fields; an array backs maps of more than 64).
struct FieldDecoder {
    private let table: FieldTable
    private var consumedBits: UInt64 = 0
    private var consumedBeyond64: [Bool]
    private let kind: EntityKind

    init(_ table: FieldTable, kind: EntityKind) {
        self.table = table
        consumedBeyond64 = table.entries.count > 64 ? [Bool](repeating: false, count: table.entries.count - 64) : []
        self.kind = kind
    }

    private mutating func markConsumed(_ index: Int) {
        if index < 64 { consumedBits |= 1 << UInt64(index) } else { consumedBeyond64[index - 64] = true }
    }

    private func isConsumed(_ index: Int) -> Bool {
        index < 64 ? consumedBits & (1 << UInt64(index)) != 0 : consumedBeyond64[index - 64]
    }

    /// The entry after the last one taken: a reader that asks for fields in name order finds each one here, with
    /// one comparison instead of a binary search.
    private var next = 0

    /// The entry named `name`, marked consumed; nil when absent.
    private mutating func consume(_ name: StaticString) -> Int? {
        let index: Int
        if next < table.entries.count, table.name(at: next, equals: name) {
            index = next
        } else if let found = table.index(of: name) {
            index = found
        } else {
            return nil
        }
        next = index + 1
        markConsumed(index)
        return index
    }

    /// The entry named `name` of the given type, marked consumed; nil when absent.
    private mutating func take(_ name: StaticString, type: UInt8, _ what: String) throws(FormatError) -> Int? {
        guard let index = consume(name) else { return nil }
        guard table.entries[index].type == type else { throw FormatError("\(kind) field '\(name)' is not \(what)") }
        return index
    }

    mutating func string(_ name: StaticString) throws(FormatError) -> String {
        try string(name, reusing: nil)
    }

    /// ``string(_:)``, but `known` itself when the stored bytes are exactly its UTF-8: a lookup already holds the
    /// account, host, client and realm it asked for, and sharing them saves an allocation and a copy per field.
    mutating func string(_ name: StaticString, reusing known: String?) throws(FormatError) -> String {
        guard let index = try take(name, type: 0x01, "text") else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        if let known, table.value(at: index, equals: known) { return known }
        return table.string(at: index)
    }

    mutating func optionalString(_ name: StaticString) throws(FormatError) -> String? {
        guard let index = try take(name, type: 0x01, "text") else { return nil }
        return table.string(at: index)
    }

    mutating func integer(_ name: StaticString) throws(FormatError) -> Int64 {
        guard let value = try optionalInteger(name) else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        return value
    }

    mutating func optionalInteger(_ name: StaticString) throws(FormatError) -> Int64? {
        guard let index = try take(name, type: 0x02, "an integer") else { return nil }
        return table.integer(at: index)
    }

    mutating func secret(_ name: StaticString) throws(FormatError) -> Secret {
        guard let index = try take(name, type: 0x01, "text") else {
            throw FormatError("\(kind) record lacks required field '\(name)'")
        }
        return table.secret(at: index)
    }

    /// The required fields every credential has; `credential_type` is consumed and ignored (FORMAT.md §5.3).
    mutating func credential() throws(FormatError) -> (homeAccountID: String, environment: String, clientID: String, secret: Secret) {
        consumeCredentialType()
        return (try string("home_account_id"), try string("environment"), try string("client_id"), try secret("secret"))
    }

    /// `credential_type` is implied by the database; it is consumed (not carried as unknown) and ignored.
    mutating func consumeCredentialType() {
        _ = consume("credential_type")
    }

    /// Everything not consumed, as JSON values.
    func additionalFields() throws(FormatError) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for index in table.entries.indices where !isConsumed(index) {
            let name = table.name(at: index)
            let value: JSONValue
            switch table.entries[index].type {
            case 0x01: value = .string(table.string(at: index))
            case 0x02: value = .integer(table.integer(at: index))
            default:
                guard let decoded = table.json(at: index) else { throw FormatError("\(kind) field '\(name)' is not valid JSON") }
                value = decoded
            }
            // Swift dictionaries merge canonically equivalent keys; refuse rather than drop a field.
            guard result.updateValue(value, forKey: name) == nil else {
                throw FormatError("\(kind) has two unknown fields whose names are canonically equivalent Unicode")
            }
        }
        return result
    }
}

