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

/// Reads an entity's modelled fields out of a field map; what is left becomes `additionalFields`.
struct FieldDecoder {
    private var remaining: FieldMap
    private let kind: EntityKind

    init(_ map: FieldMap, kind: EntityKind) {
        remaining = map
        self.kind = kind
    }

    mutating func string(_ name: String) throws(FormatError) -> String {
        guard let value = try optionalString(name) else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        return value
    }

    mutating func optionalString(_ name: String) throws(FormatError) -> String? {
        guard let value = remaining[name] else { return nil }
        remaining[name] = nil
        guard case .text(let bytes) = value else { throw FormatError("\(kind) field '\(name)' is not text") }
        return String(decoding: bytes, as: UTF8.self)
    }

    mutating func integer(_ name: String) throws(FormatError) -> Int64 {
        guard let value = try optionalInteger(name) else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        return value
    }

    mutating func optionalInteger(_ name: String) throws(FormatError) -> Int64? {
        guard let value = remaining[name] else { return nil }
        remaining[name] = nil
        guard case .integer(let number) = value else { throw FormatError("\(kind) field '\(name)' is not an integer") }
        return number
    }

    mutating func secret(_ name: String) throws(FormatError) -> Secret {
        guard let value = remaining[name] else { throw FormatError("\(kind) record lacks required field '\(name)'") }
        remaining[name] = nil
        guard case .text(let bytes) = value else { throw FormatError("\(kind) field '\(name)' is not text") }
        return Secret(bytes: bytes)
    }

    /// The required fields every credential has; `credential_type` is consumed and ignored (FORMAT.md §5.3).
    mutating func credential() throws(FormatError) -> (homeAccountID: String, environment: String, clientID: String, secret: Secret) {
        remaining["credential_type"] = nil
        return (try string("home_account_id"), try string("environment"), try string("client_id"), try secret("secret"))
    }

    /// Everything not consumed, as JSON values.
    func additionalFields() throws(FormatError) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for name in remaining.names {
            let value: JSONValue
            switch remaining[name]! {
            case .text(let bytes): value = .string(String(decoding: bytes, as: UTF8.self))
            case .integer(let number): value = .integer(number)
            case .json(let bytes):
                guard let decoded = JSONText.decode(bytes) else { throw FormatError("\(kind) field '\(name)' is not valid JSON") }
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

extension String {
    /// ASCII-only lower-casing on bytes: the canonicalization FORMAT.md §4.2 prescribes for identifiers.
    var asciiLowercased: String {
        String(decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
