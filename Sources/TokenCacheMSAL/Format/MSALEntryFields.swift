internal import TokenCache
internal import TokenCacheRecords
/// The members of one MSAL cache entry, looked up by their canonical MSAL names whatever the SDK's spelling.
///
/// The SDKs spell some fields differently: JS writes camelCase (`homeAccountId`, `keyId`, `tokenType`,
/// `userAssertionHash`), Go writes `keyid`, .NET and ObjC `kid`. A member matches a canonical name when the two are
/// equal after ASCII lower-casing and removing `_` (``normalized(_:)``), or when it is one of the field's declared
/// aliases (`kid`). If several spellings of one field are present with different values, the entry is
/// ambiguous and rejected; with equal values it is read once. Members no modelled field claims are the entry's
/// unknown fields (``remainingFields()``), kept under the name as written.
///
/// Values: `null` is the same as absent everywhere (MSAL Python writes `"home_account_id": null` for app
/// tokens); an empty string is absent for optional fields (Python writes `"username": ""`).
struct MSALEntryFields {
    private let members: [String: ResponseJSON]
    private var namesByNormalized: [String: [String]] = [:]
    private var claimed: Set<String> = []

    init(_ members: [String: ResponseJSON]) {
        self.members = members
        for name in members.keys { namesByNormalized[Self.normalized(name), default: []].append(name) }
    }

    /// ASCII-lower-cased, `_` removed: `key_id`, `keyId` and `keyid` all give `keyid`.
    static func normalized(_ name: String) -> String {
        String(decoding: name.utf8.lazy.filter { $0 != UInt8(ascii: "_") }.map(ASCII.lowercased), as: UTF8.self)
    }

    /// The value of `field` (a canonical name) under any of its spellings or `aliases`; nil when absent or
    /// `null`. Claims every spelling, so none of them ends up among the unknown fields.
    mutating func take(_ field: String, aliases: [String] = []) throws(MSALImportError) -> ResponseJSON? {
        var found: ResponseJSON?
        for spelling in [field] + aliases {
            for name in namesByNormalized[Self.normalized(spelling)] ?? [] where !claimed.contains(name) {
                claimed.insert(name)
                guard let value = members[name], value != .null else { continue }
                if let found, found != value {
                    throw MSALImportError(.invalidValue, "the entry spells this field more than once, with different values", field: field)
                }
                found = value
            }
        }
        return found
    }

    /// A string field; nil when absent, `null` or (unless `keepEmpty`) empty.
    mutating func optionalString(_ field: String, aliases: [String] = [], keepEmpty: Bool = false) throws(MSALImportError) -> String? {
        guard let value = try take(field, aliases: aliases) else { return nil }
        guard case .string(let bytes) = value else { throw MSALImportError(.wrongType, "must be a string", field: field) }
        return bytes.isEmpty && !keepEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// A string field that must be present and non-empty.
    mutating func requiredString(_ field: String) throws(MSALImportError) -> String {
        guard let value = try take(field) else { throw MSALImportError(.missingField, "is required", field: field) }
        guard case .string(let bytes) = value else { throw MSALImportError(.wrongType, "must be a string", field: field) }
        guard !bytes.isEmpty else { throw MSALImportError(.invalidValue, "must not be empty", field: field) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The `secret`: a non-empty string, straight into a ``Secret``.
    mutating func secret() throws(MSALImportError) -> Secret {
        guard let value = try take("secret") else { throw MSALImportError(.missingField, "is required", field: "secret") }
        guard case .string(let bytes) = value else { throw MSALImportError(.wrongType, "must be a string", field: "secret") }
        guard !bytes.isEmpty else { throw MSALImportError(.invalidValue, "must not be empty", field: "secret") }
        return Secret(bytes: bytes)
    }

    /// A timestamp field (``MSALFieldValues/timestamp(_:)``); nil when absent or `null`.
    mutating func optionalTimestamp(_ field: String) throws(MSALImportError) -> Int64? {
        guard let value = try take(field) else { return nil }
        switch value {
        case .string, .number:
            guard let seconds = MSALFieldValues.timestamp(value) else {
                throw MSALImportError(.invalidValue, "is not a timestamp (integer or decimal Unix seconds, below 10^18 in magnitude)", field: field)
            }
            return seconds
        default:
            throw MSALImportError(.wrongType, "must be a string or a number", field: field)
        }
    }

    /// A timestamp field that must be present.
    mutating func requiredTimestamp(_ field: String) throws(MSALImportError) -> Int64 {
        guard let seconds = try optionalTimestamp(field) else { throw MSALImportError(.missingField, "is required", field: field) }
        return seconds
    }

    /// A scope target (``MSALFieldValues/target(_:)``), checked against the scope alphabet; nil when absent,
    /// `null` or empty.
    mutating func optionalTarget() throws(MSALImportError) -> String? {
        guard let value = try take("target") else { return nil }
        guard let target = MSALFieldValues.target(value) else {
            throw MSALImportError(.wrongType, "must be a string or an array of strings", field: "target")
        }
        guard (try? ScopeSet(parsing: target)) != nil else {
            throw MSALImportError(.invalidValue, "contains a character outside the OAuth scope alphabet", field: "target")
        }
        return target.isEmpty ? nil : target
    }

    /// Whether any spelling of `field` is present (even as `null`), without claiming it.
    func contains(_ field: String) -> Bool { namesByNormalized[Self.normalized(field)] != nil }

    /// The members no field claimed, under their names as written.
    func remainingFields() throws(MSALImportError) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        for (name, value) in members where !claimed.contains(name) {
            do { fields[name] = try MSALFieldValues.jsonValue(value) } catch {
                throw MSALImportError(.invalidValue, "an unknown field holds a number outside the range of a double")
            }
        }
        return fields
    }
}
