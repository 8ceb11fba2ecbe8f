internal import TokenCache
/// Entities → the unified MSAL JSON cache that MSAL Python, .NET, Go and Node read, streamed to a sink.
///
/// What is written, and why:
/// - the five sections `AccessToken`, `Account`, `AppMetadata`, `IdToken`, `RefreshToken`, always (empty ones as
///   `{}`, as MSAL's own templates have them), plus the unknown sections an import kept, restored as read;
/// - sections sorted bytewise by name, entries sorted bytewise by key, fields sorted bytewise by name: exporting
///   the same content twice gives the same bytes, whatever order the entities came in;
/// - keys from ``MSALCacheKey``: the ones MSAL Python derives from each entry's fields, so that it can modify and
///   remove what it loads;
/// - timestamps as strings of integer Unix seconds (`"1700000000"`), which every SDK writes and reads;
/// - `credential_type` on every credential, `AccessToken` for bound (PoP, SSH-cert) access tokens too, as MSAL
///   Python, .NET and Go write it: MSAL Python asserts that type when it removes an access token (on sign-out, and
///   when its search drops an expired one), so JS's `AccessToken_With_AuthScheme` would make it fail; `key_id` for
///   bound tokens (the name Python and JS write; .NET and Go also read it through their own aliases poorly, but
///   it is the majority spelling), and every unknown field restored under its own name (a modelled field of the
///   same name wins);
/// - optional fields only when present, as .NET and Go do (an app token has no `home_account_id` member);
/// - with `revealSecrets` false, every `secret` is ``redactedSecret``: a file for inspection or support that
///   holds no token. Such a file imports as tokens whose secret is the marker, which no server accepts.
///
/// Memory: the entities are held by the caller; the writer sorts references to them and hands the text to the
/// sink in pieces of about ``flushSize`` bytes.
package struct MSALCacheWriter {
    /// What every secret is replaced with when secrets are not revealed: `<redacted>`, the library's one marker.
    static let redactedSecret = Secret.redactionMarker

    /// Bytes buffered before the sink is called.
    static let flushSize = 64 * 1024

    /// Why content could not be written.
    package struct ExportError: Error, Sendable, Equatable, CustomStringConvertible {
        package enum Code: String, Sendable { case duplicateKey, sectionNameClash, secretNotUTF8, sinkFailed }
        package var code: Code
        package var section: String
        /// The clashing entry key (identifiers only), for duplicateKey.
        package var key: String?
        package var reason: String

        package var description: String {
            var text = "MSAL cache export, section \"\(MSALImportError.displayed(section))\""
            if let key { text += ", entry \"\(MSALImportError.displayed(key))\"" }
            return text + ": " + reason
        }
    }

    /// Writes `content` as one JSON document to `sink`, in order, in pieces.
    package static func write(_ content: MSALCacheContent, revealSecrets: Bool, to sink: ([UInt8]) throws -> Void) throws(ExportError) {
        do { try write(from: content, revealSecrets: revealSecrets, to: sink) } catch let error as ExportError { throw error } catch {
            // An in-memory content fails only through the writer's own checks, which throw ExportError.
            throw ExportError(code: .sinkFailed, section: "", reason: "writing the output failed")
        }
    }

    /// Writes what `source` holds as one JSON document to `sink`, in order, in pieces: the writer's own refusals as
    /// ``ExportError``, the source's errors as they are.
    static func write<Source: MSALExportSource>(from source: Source, revealSecrets: Bool, to sink: ([UInt8]) throws -> Void) throws {
        var sections: [(name: String, kind: EntityKind?, entries: [MSALExportKey<Source.Handle>], unknown: JSONValue?)] = []
        for (name, value) in try source.keptSections() {
            guard case .unknown = MSALSection(name: name) else {
                throw ExportError(code: .sectionNameClash, section: name, reason: "an unknown section has the name of an entity section")
            }
            sections.append((name, nil, [], value))
        }
        for kind in EntityKind.allCases {
            var keyed = try source.keys(of: kind)
            // Records whose key another record derives too take their distinguished key (``MSALCacheKey``).
            var seen: [String: Int] = [:]
            for entry in keyed { seen[entry.key, default: 0] += 1 }
            for index in keyed.indices where seen[keyed[index].key, default: 0] > 1 {
                if let distinguished = keyed[index].distinguished { keyed[index].key = distinguished }
            }
            keyed.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for index in keyed.indices.dropFirst() where keyed[index].key == keyed[index - 1].key {
                throw ExportError(
                    code: .duplicateKey, section: kind.rawValue, key: keyed[index].key,
                    reason: "two entities have the same MSAL key")
            }
            sections.append((kind.rawValue, kind, keyed, nil))
        }
        sections.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }

        var output = MSALJSONOutput()
        func flush(force: Bool = false) throws {
            guard force || output.count >= flushSize else { return }
            try output.drain(into: sink)
        }
        output.append("{")
        for (sectionIndex, section) in sections.enumerated() {
            output.append(sectionIndex == 0 ? "\n  " : ",\n  ")
            output.appendString(section.name)
            output.append(": ")
            if let unknown = section.unknown {
                output.appendValue(revealSecrets ? unknown : Self.redactingStrings(unknown))
                try flush()
                continue
            }
            let entries = section.entries
            if entries.isEmpty {
                output.append("{}")
                continue
            }
            output.append("{")
            for (entryIndex, entry) in entries.enumerated() {
                output.append(entryIndex == 0 ? "\n    " : ",\n    ")
                output.appendString(entry.key)
                output.append(": {")
                let fields = Self.fields(of: try source.entity(entry.handle, of: section.kind!))
                for (fieldIndex, name) in MSALJSONOutput.sorted(fields.keys).enumerated() {
                    output.append(fieldIndex == 0 ? "\n      " : ",\n      ")
                    output.appendString(name)
                    output.append(": ")
                    switch fields[name]! {
                    case .text(let text): output.appendString(text)
                    case .json(let value): output.appendValue(revealSecrets ? value : Self.redactingStrings(value))
                    case .secret(let secret):
                        if revealSecrets {
                            guard secret.withUnsafeBytes({ String(validating: $0, as: UTF8.self) != nil }) else {
                                throw ExportError(code: .secretNotUTF8, section: section.name, key: entry.key, reason: "a secret is not valid UTF-8")
                            }
                            secret.withUnsafeBytes { output.appendString(utf8: $0) }
                        } else {
                            output.appendString(redactedSecret)
                        }
                    }
                }
                output.append("\n    }")
                try flush()
            }
            output.append("\n  }")
        }
        output.append(sections.isEmpty ? "}\n" : "\n}\n")
        try flush(force: true)
    }

    /// `value` with every string replaced by the redaction marker: what a redacted export writes for unknown fields
    /// and sections, which may hold anything (a foreign SDK's token, say). Their shape, numbers and booleans stay.
    static func redactingStrings(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string: .string(redactedSecret)
        case .array(let elements): .array(elements.map(redactingStrings))
        case .object(let members): .object(members.mapValues(redactingStrings))
        default: value
        }
    }

    /// The whole document in memory (tests, small caches).
    static func document(_ content: MSALCacheContent, revealSecrets: Bool) throws(ExportError) -> [UInt8] {
        var document: [UInt8] = []
        try write(content, revealSecrets: revealSecrets) { document.append(contentsOf: $0) }
        return document
    }

    private enum FieldValue {
        case text(String)
        case secret(Secret)
        case json(JSONValue)
    }

    /// The members of one entry: modelled fields under their MSAL names, then unknown fields not already written.
    private static func fields(of entity: MSALEntity) -> [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        func set(_ name: String, _ value: String?) { if let value { fields[name] = .text(value) } }
        func set(_ name: String, _ value: Int64?) { if let value { fields[name] = .text(String(value)) } }
        func credential(_ type: String, _ homeAccountID: String, _ environment: String, _ clientID: String, _ secret: Secret) {
            set("credential_type", type)
            // An app (client-credential) token has no account: `null`, as MSAL Python writes it, whose lookup
            // matches `home_account_id: None` only against an entry that has the member.
            fields["home_account_id"] = homeAccountID.isEmpty ? .json(.null) : .text(homeAccountID)
            set("environment", environment)
            set("client_id", clientID)
            fields["secret"] = .secret(secret)
        }
        let additional: [String: JSONValue]
        switch entity {
        case .accessToken(let token):
            credential("AccessToken", token.homeAccountID, token.environment, token.clientID, token.secret)
            set("realm", token.realm)
            set("target", token.target)
            set("cached_at", token.cachedAt)
            set("expires_on", token.expiresOn)
            set("extended_expires_on", token.extendedExpiresOn)
            set("refresh_on", token.refreshOn)
            set("token_type", token.tokenType)
            set("key_id", token.keyID)
            set("user_assertion_hash", token.userAssertionHash)
            set("ext_cache_key", token.extendedCacheKey)
            additional = token.additionalFields
        case .refreshToken(let token):
            credential("RefreshToken", token.homeAccountID, token.environment, token.clientID, token.secret)
            set("family_id", token.familyID)
            set("target", token.target)
            set("realm", token.realm)
            set("last_modification_time", token.lastModificationTime)
            set("user_assertion_hash", token.userAssertionHash)
            set("expires_on", token.expiresOn)
            additional = token.additionalFields
        case .idToken(let token):
            credential("IdToken", token.homeAccountID, token.environment, token.clientID, token.secret)
            set("realm", token.realm)
            additional = token.additionalFields
        case .account(let account):
            set("home_account_id", account.homeAccountID)
            set("environment", account.environment)
            set("realm", account.realm)
            set("local_account_id", account.localAccountID)
            set("username", account.username)
            set("authority_type", account.authorityType)
            set("account_source", account.accountSource)
            set("name", account.name)
            set("given_name", account.givenName)
            set("family_name", account.familyName)
            set("middle_name", account.middleName)
            set("alternative_account_id", account.alternativeAccountID)
            set("client_info", account.clientInfo)
            additional = account.additionalFields
        case .appMetadata(let metadata):
            set("client_id", metadata.clientID)
            set("environment", metadata.environment)
            set("family_id", metadata.familyID)
            additional = metadata.additionalFields
        }
        for (name, value) in additional where fields[name] == nil { fields[name] = .json(value) }
        return fields
    }
}
