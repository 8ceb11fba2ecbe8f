internal import TokenCacheRecords

// What the record layer's field coders need to know of the model: secrets go in and out of field maps as bytes
// (never as a `String`), unknown fields as JSONValue, and every credential starts with the same five fields.

extension FieldEncoder {
    mutating func set(_ name: String, _ secret: Secret) {
        secret.withUnsafeBytes { set(name, text: $0) }
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
        for (name, value) in additional {
            if case .string(let text) = value {
                setIfAbsent(name, .string(text))
            } else {
                setIfAbsent(name, .json(Array(JSONText.encode(value).utf8)))
            }
        }
    }
}

extension FieldDecoder {
    init(_ table: FieldTable, kind: EntityKind) {
        self.init(table, kind: kind.rawValue)
    }

    /// A required text field, written straight into a zeroizing ``Secret`` (re-encoded there from its stored segments).
    mutating func secret(_ name: StaticString) throws(FormatError) -> Secret {
        guard let index = try take(name, type: 0x01, "text") else {
            throw FormatError("\(kind) record lacks required field '\(name)'")
        }
        let table = self.table
        return Secret(count: table.textCount(at: index)) { output in table.writeText(at: index, into: output) }
    }

    /// The required fields every credential has; `credential_type` is consumed and ignored (FORMAT.md §5.3).
    mutating func credential() throws(FormatError) -> (homeAccountID: String, environment: String, clientID: String, secret: Secret) {
        consumeCredentialType()
        return (try string("home_account_id"), try string("environment"), try string("client_id"), try secret("secret"))
    }

    /// Everything not consumed, as JSON values.
    func additionalFields() throws(FormatError) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for index in table.entries.indices where !isConsumed(index) {
            let name = table.name(at: index)
            let value: JSONValue
            switch table.entries[index].type {
            case FieldType.text, FieldType.segmentedText: value = .string(table.string(at: index))
            case 0x02: value = .integer(table.integer(at: index))
            default:
                guard let decoded = JSONText.decode(table.value(at: index)) else {
                    throw FormatError("\(kind) field '\(name)' is not valid JSON")
                }
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
