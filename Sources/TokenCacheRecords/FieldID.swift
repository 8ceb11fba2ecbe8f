#if canImport(Glibc)
import Glibc
#endif

/// The field ids of body schema 2 (FORMAT.md §5.3): one byte for each name the model writes, instead of the name.
///
/// Ids are part of the format: an id never changes meaning, and a name added later gets the next free id (a reader
/// that does not know an id refuses the record, so adding one raises the format's read version). They were assigned
/// in ascending bytewise order of the names, but the order of fields in a map is still that of their names: a field
/// whose name has no id (id 0, name written out) sorts among them by name.
package enum FieldID {
    /// The id of `secret`, the one field that may be segmented text (type 0x04).
    package static let secret: UInt8 = 23

    /// The highest id assigned.
    package static let last: UInt8 = 27

    /// The name of `id`; nil for 0 (a name written out) and for ids not assigned. A switch, not an array: no lazy
    /// global to check on every field of every record read.
    @inlinable
    package static func name(_ id: UInt8) -> StaticString? {
        switch id {
        case 1: "account_source"
        case 2: "alternative_account_id"
        case 3: "authority_type"
        case 4: "cached_at"
        case 5: "client_id"
        case 6: "client_info"
        case 7: "credential_type"
        case 8: "environment"
        case 9: "expires_on"
        case 10: "ext_cache_key"
        case 11: "extended_expires_on"
        case 12: "family_id"
        case 13: "family_name"
        case 14: "given_name"
        case 15: "home_account_id"
        case 16: "key_id"
        case 17: "last_modification_time"
        case 18: "local_account_id"
        case 19: "middle_name"
        case 20: "name"
        case 21: "realm"
        case 22: "refresh_on"
        case 23: "secret"
        case 24: "target"
        case 25: "token_type"
        case 26: "user_assertion_hash"
        case 27: "username"
        default: nil
        }
    }

    /// The id of `name`, if it has one (writers, and readers checking that a written-out name has none): its length
    /// picks the few names to compare (a switch: no table to look up, no hashing).
    package static func id(of name: UnsafeRawBufferPointer) -> UInt8? {
        switch name.count {
        case 4: matches(name, "name", 20)
        case 5: matches(name, "realm", 21)
        case 6: matches(name, "key_id", 16) ?? matches(name, "secret", 23) ?? matches(name, "target", 24)
        case 8: matches(name, "username", 27)
        case 9: matches(name, "cached_at", 4) ?? matches(name, "client_id", 5) ?? matches(name, "family_id", 12)
        case 10: matches(name, "expires_on", 9) ?? matches(name, "given_name", 14) ?? matches(name, "refresh_on", 22) ?? matches(name, "token_type", 25)
        case 11: matches(name, "client_info", 6) ?? matches(name, "environment", 8) ?? matches(name, "family_name", 13) ?? matches(name, "middle_name", 19)
        case 13: matches(name, "ext_cache_key", 10)
        case 14: matches(name, "account_source", 1) ?? matches(name, "authority_type", 3)
        case 15: matches(name, "credential_type", 7) ?? matches(name, "home_account_id", 15)
        case 16: matches(name, "local_account_id", 18)
        case 19: matches(name, "extended_expires_on", 11) ?? matches(name, "user_assertion_hash", 26)
        case 22: matches(name, "alternative_account_id", 2) ?? matches(name, "last_modification_time", 17)
        default: nil
        }
    }

    package static func id(of name: [UInt8]) -> UInt8? { name.withUnsafeBytes { id(of: $0) } }

    @inline(__always)
    private static func matches(_ name: UnsafeRawBufferPointer, _ known: StaticString, _ id: UInt8) -> UInt8? {
        memcmp(name.baseAddress!, known.utf8Start, name.count) == 0 ? id : nil
    }
}
