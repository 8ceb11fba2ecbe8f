internal import TokenCache
/// Why an MSAL serialized cache, or one entry of it, could not be imported.
///
/// An import is all-or-nothing, so the caller needs to know exactly which entry to fix: the error names the
/// section and the entry key as written (escaped for display, see ``displayed(_:)``), the modelled field that
/// failed under its canonical MSAL name, and a fixed reason. It never holds a field's value: a value may be a
/// token, and the reasons are constant phrases, so a message cannot leak one. Syntax errors carry the byte
/// offset in the input instead of any input bytes.
///
/// The entry key is shown because it is the only handle a user has on an entry in a large file. Keys are built
/// from identifiers (account, host, client, realm, scopes), not from secrets; a message can therefore contain an
/// account identifier, which is why ``description`` is meant for the operator running an import, not for logs
/// shipped elsewhere.
struct MSALImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    enum Code: String, Sendable, Equatable {
        /// The input is not well-formed JSON (or not the expected nesting of objects).
        case syntax
        /// A section or entry value exceeds the reader's size limit.
        case valueTooLarge
        /// Reading the input failed (an I/O error from the source).
        case readFailed
        /// The document, a section or an entry is not a JSON object.
        case notAnObject
        /// A required field is absent (or `null`).
        case missingField
        /// A field has the wrong JSON type.
        case wrongType
        /// A field has the right type but a value the cache cannot hold (bad timestamp, bad scope, empty secret, …).
        case invalidValue
        /// The entry uses a feature the engine does not model (an extended cache key); an importer may skip it.
        case unsupported
    }

    var code: Code
    /// Byte offset in the input where the problem was found, when it is a position in the input.
    var offset: Int?
    /// The section name as written.
    var section: String?
    /// The entry key as written.
    var key: String?
    /// The canonical MSAL name of the field that failed (`expires_on`, `key_id`, …), never a name taken from input.
    var field: String?
    /// A fixed phrase.
    var reason: String

    init(_ code: Code, _ reason: String, offset: Int? = nil, section: String? = nil, key: String? = nil, field: String? = nil) {
        self.code = code
        self.reason = reason
        self.offset = offset
        self.section = section
        self.key = key
        self.field = field
    }

    /// This error with the section and key of the entry it happened in (kept if already set).
    func located(section: String?, key: String?) -> MSALImportError {
        var copy = self
        if copy.section == nil { copy.section = section }
        if copy.key == nil { copy.key = key }
        return copy
    }

    /// E.g. `MSAL cache section "AccessToken", entry "uid.utid-…": field expires_on: not a timestamp`.
    var description: String {
        var text = "MSAL cache"
        if let section { text += " section \"\(Self.displayed(section))\"" }
        if let key { text += ", entry \"\(Self.displayed(key))\"" }
        if let offset { text += " at byte \(offset)" }
        text += ": "
        if let field { text += "field \(field): " }
        return text + reason
    }

    /// The longest name or key shown in full; longer ones are cut (a key can be kilobytes of scopes).
    static let displayLimit = 160

    /// `text` safe to print: every character ``DisplaySafety`` names (controls, bidirectional and invisible
    /// characters) and `"`/`\` as `\u{…}`/escapes, cut to ``displayLimit`` characters.
    static func displayed(_ text: String) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == displayLimit {
                result += "…"
                break
            }
            count += 1
            if DisplaySafety.mustEscape(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else if scalar == "\"" || scalar == "\\" {
                result += "\\" + String(scalar)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The library's error for this one: `.invalidArgument` with ``description`` as the message.
    var tokenCacheError: TokenCacheError { TokenCacheError(.invalidArgument, description) }
}
