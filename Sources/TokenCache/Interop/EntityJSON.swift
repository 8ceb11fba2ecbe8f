internal import TokenCacheRecords

/// How ``CacheEntity/jsonObject(revealSecrets:timestampsAsStrings:)`` renders an entity.
extension CacheEntity {
    /// The entity as an MSAL-shaped JSON object (MSAL wire names, unknown fields included).
    ///
    /// - Parameters:
    ///   - revealSecrets: when false (the default), the `secret` field is ``Secret/redactionMarker``.
    ///   - timestampsAsStrings: MSAL's serialized caches hold timestamps as strings of integers; tools that
    ///     want arithmetic get integers.
    public func jsonObject(revealSecrets: Bool = false, timestampsAsStrings: Bool = false) -> [String: JSONValue] {
        let fields = storable.encodeFields()
        var object: [String: JSONValue] = [:]
        for name in fields.names {
            switch fields[name]! {
            case .text(let bytes):
                if name == "secret" && !revealSecrets {
                    object[name] = .string(Secret.redactionMarker)
                } else {
                    object[name] = .string(String(decoding: bytes, as: UTF8.self))
                }
            case .integer(let number):
                object[name] = timestampsAsStrings ? .string(String(number)) : .integer(number)
            case .json(let bytes):
                object[name] = JSONText.decode(bytes) ?? .null
            }
        }
        return object
    }
}

extension JSONValue {
    /// Pretty-printed JSON text with sorted keys: stable output for scripts and tests.
    /// For display: pretty, with sorted keys, and every character ``DisplaySafety`` names escaped.
    ///
    /// - Parameter indent: Spaces before every line but the first, for a value nested in a document written piece
    ///   by piece.
    public func prettyPrinted(indent: Int = 0) -> String { JSONPrettyPrinter.print(self, indent: indent) }
}
