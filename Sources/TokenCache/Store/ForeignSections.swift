package import TokenCacheStorage
package import TokenCacheRecords
internal import TokenCacheSodium

/// The top-level sections of an imported MSAL cache that are not one of the five entity kinds (an SDK's own
/// additions), kept so that an export writes them back: MSAL .NET, Go and JS preserve unknown sections on a round
/// trip, and a cache that passed through this store should lose nothing they would keep.
///
/// They are one sealed record, `meta` / `foreign-sections` (FORMAT.md §3 and §5.5): a record body whose field map
/// holds one JSON field (type 0x03) per section, named as written. Sealed like every record, bound to its slot, and
/// as private as the tokens (a section may hold anything).
extension RecordStore {
    static let foreignSectionsKey: [UInt8] = Array("foreign-sections".utf8)

    /// The kept sections, by name; empty when there are none.
    package func foreignSections(in txn: any RecordReading) throws -> [String: JSONValue] {
        let key = Self.foreignSectionsKey
        let decoded = try txn.withValue(in: KeySpace.meta, forKey: key) { value in value.withUnsafeBytes { value in
            Result { () throws(FormatError) -> [String: JSONValue] in
                let plaintext = try openBodyPlaintext(value, slot: slot(KeySpace.meta, key))
                return try plaintext.withUnsafeBytes { bytes in
                    Result { () throws(FormatError) -> [String: JSONValue] in
                        let body = try DecodedBody(borrowing: bytes)
                        var sections: [String: JSONValue] = [:]
                        for index in body.fields.entries.indices {
                            guard body.fields.entries[index].type == 0x03, let value = JSONText.decode(body.fields.value(at: index)) else {
                                throw FormatError("foreign section \(index) is not a JSON field")
                            }
                            sections[body.fields.name(at: index)] = value
                        }
                        return sections
                    }
                }.get()
            }
        } }
        switch decoded {
        case nil: return [:]
        case .success(let sections)?: return sections
        case .failure(let error)?:
            let fingerprint = keyring.fingerprint(database: KeySpace.meta.name, key: key)
            throw TokenCacheError(
                .corruptRecord, "the kept MSAL sections (record \(fingerprint)) do not decode: \(error.message)",
                recordFingerprint: fingerprint)
        }
    }

    /// Replaces the kept sections with `sections` (none: the record is removed).
    package func setForeignSections(_ sections: [String: JSONValue], now: Int64, in txn: any RecordWriting) throws {
        let key = Self.foreignSectionsKey
        guard !sections.isEmpty else {
            _ = try txn.delete(in: KeySpace.meta, key: key)
            return
        }
        let body = try Self.foreignSectionsBody(sections, now: now)
        try putSealed(summary: nil, body: body.encode(), database: KeySpace.meta, key: key, into: txn)
    }

    /// The record body that keeps `sections`, checked: names of 1 to 1,024 bytes, finite numbers, and the record
    /// within the format's size limit. An import checks this before it writes anything.
    package static func foreignSectionsBody(_ sections: [String: JSONValue], now: Int64) throws(TokenCacheError) -> RecordBody {
        var fields = FieldMap()
        for (name, value) in sections {
            guard !name.isEmpty, name.utf8.count <= FieldMap.maximumNameLength else {
                throw TokenCacheError(.invalidArgument, "an MSAL section name is empty or longer than \(FieldMap.maximumNameLength) bytes")
            }
            guard value.isFinite else { throw TokenCacheError(.invalidArgument, "an MSAL section holds a non-finite number") }
            fields[name] = .json(Array(JSONText.encode(value).utf8))
        }
        let body = RecordBody(revision: 1, updatedAt: now, fields: fields)
        guard body.encodedCount <= FormatConstants.maximumBodyPlaintext else {
            throw TokenCacheError(
                .invalidArgument,
                "the unknown MSAL sections to keep take \(body.encodedCount) bytes, above the \(FormatConstants.maximumBodyPlaintext)-byte record limit")
        }
        return body
    }
}
