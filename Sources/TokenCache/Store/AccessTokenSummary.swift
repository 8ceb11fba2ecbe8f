package import TokenCacheRecords
internal import TokenCacheStorage

/// The sealed summary of an access token (FORMAT.md §5.4), read in place: what a lookup needs to pick a candidate
/// without decrypting the token.
///
/// The views point into the decrypted summary (a temporary buffer wiped after use) or into a string the caller
/// keeps alive; nothing is copied, so judging a candidate allocates nothing.
package struct AccessTokenSummaryView {
    var environment: UnsafeRawBufferPointer
    /// The canonical target (FORMAT.md §4.2): lower-cased scopes, sorted bytewise, de-duplicated, one space apart.
    var canonicalTarget: UnsafeRawBufferPointer
    package var cachedAt: Int64
    package var expiresOn: Int64
    var refreshOn: Int64?

    /// Parses and validates a summary plaintext (a bare field map). Fields other than the five are ignored.
    init(plaintext: UnsafeRawBufferPointer) throws(FormatError) {
        var environment: UnsafeRawBufferPointer? = nil, target: UnsafeRawBufferPointer? = nil
        var cachedAt: Int64? = nil, expiresOn: Int64? = nil, refreshOn: Int64? = nil
        var reader = ByteReader(plaintext)
        // Schema 2 leads with its number; a summary of schema 1 with its u32be field count, whose first byte is 0.
        let compact = plaintext.first == FieldType.compactSchema
        if compact { _ = try reader.readByte("summary schema") }
        try (compact ? FieldTable.forEachCompactEntry : FieldTable.forEachEntry)(&reader, { _ in }) { entry throws(FormatError) in
            let name = entry.name
            let value = UnsafeRawBufferPointer(rebasing: plaintext[entry.value])
            guard let field = SummaryField(name) else { return }
            guard entry.type == field.type else {
                throw FormatError("\(EntityKind.accessToken) field '\(field.name)' is not \(field.type == 0x01 ? "text" : "an integer")")
            }
            switch field {
            case .environment: environment = value
            case .target: target = value
            case .cachedAt: cachedAt = Int64(bigEndian: value.loadUnaligned(as: Int64.self))
            case .expiresOn: expiresOn = Int64(bigEndian: value.loadUnaligned(as: Int64.self))
            case .refreshOn: refreshOn = Int64(bigEndian: value.loadUnaligned(as: Int64.self))
            }
        }
        func missing(_ field: SummaryField) -> FormatError {
            FormatError("\(EntityKind.accessToken) record lacks required field '\(field.name)'")
        }
        guard let environment else { throw missing(.environment) }
        guard let target else { throw missing(.target) }
        guard let cachedAt else { throw missing(.cachedAt) }
        guard let expiresOn else { throw missing(.expiresOn) }
        self.init(environment: environment, canonicalTarget: target, cachedAt: cachedAt, expiresOn: expiresOn, refreshOn: refreshOn)
    }

    init(
        environment: UnsafeRawBufferPointer, canonicalTarget: UnsafeRawBufferPointer, cachedAt: Int64, expiresOn: Int64,
        refreshOn: Int64?
    ) {
        self.environment = environment
        self.canonicalTarget = canonicalTarget
        self.cachedAt = cachedAt
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
    }

    /// Whether every scope of `request` is in the target (no allocation).
    func covers(_ request: ScopeSet) -> Bool { request.isCovered(byTarget: canonicalTarget) }

    /// The five summary fields, recognised by their exact name bytes.
    private enum SummaryField {
        case cachedAt, environment, expiresOn, refreshOn, target

        init?(_ name: UnsafeRawBufferPointer) {
            for field in [Self.cachedAt, .environment, .expiresOn, .refreshOn, .target] where name.elementsEqual(field.name.utf8) {
                self = field
                return
            }
            return nil
        }

        var name: StaticString {
            switch self {
            case .cachedAt: "cached_at"
            case .environment: "environment"
            case .expiresOn: "expires_on"
            case .refreshOn: "refresh_on"
            case .target: "target"
            }
        }

        var type: UInt8 {
            switch self {
            case .environment, .target: 0x01
            case .cachedAt, .expiresOn, .refreshOn: 0x02
            }
        }
    }
}

/// An owned copy of an access token's summary, for callers outside the lookup path (intersect-delete on ingest).
package struct AccessTokenSummary {
    package var environment: String
    package var canonicalTarget: String
    package var cachedAt: Int64
    package var expiresOn: Int64
    var refreshOn: Int64?

    init(_ view: AccessTokenSummaryView) {
        environment = String(decoding: view.environment, as: UTF8.self)
        canonicalTarget = String(decoding: view.canonicalTarget, as: UTF8.self)
        cachedAt = view.cachedAt
        expiresOn = view.expiresOn
        refreshOn = view.refreshOn
    }

    /// The summary a writer would have written for `token` (FORMAT.md §5.4), for records that carry none.
    init(_ token: AccessToken) throws(FormatError) {
        guard let scopes = try? ScopeSet(parsing: token.target) else { throw FormatError("target is not a scope list") }
        environment = token.environment
        canonicalTarget = scopes.canonical
        cachedAt = token.cachedAt
        expiresOn = token.expiresOn
        refreshOn = token.refreshOn
    }

    /// Lends a view of this summary (over its strings' bytes) to `body`.
    func withView<R>(_ body: (AccessTokenSummaryView) -> R) -> R {
        var environment = environment, target = canonicalTarget
        return environment.withUTF8 { environment in
            target.withUTF8 { target in
                body(
                    AccessTokenSummaryView(
                        environment: UnsafeRawBufferPointer(environment), canonicalTarget: UnsafeRawBufferPointer(target),
                        cachedAt: cachedAt, expiresOn: expiresOn, refreshOn: refreshOn
                    )
                )
            }
        }
    }

    /// The scopes as a set (for intersect-delete, off the lookup path).
    package var scopes: ScopeSet {
        get throws(FormatError) {
            guard let scopes = try? ScopeSet(parsing: canonicalTarget) else { throw FormatError("summary target is not a scope list") }
            return scopes
        }
    }
}

extension RecordStore {
    /// Lends the summary of an access-token value to `body`; built from the body when a (foreign or older) writer
    /// left none. `key` is the record's storage key.
    package func withSummary<R>(
        _ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, _ body: (AccessTokenSummaryView) throws(FormatError) -> R
    ) throws(FormatError) -> R {
        let opened = try RecordEnvelope.withOpened(
            .summary, of: value, storeID: keyring.storeID, database: KeySpace.accessTokens.name, key: key, keys: recordKey
        ) { plaintext throws(FormatError) in try body(try AccessTokenSummaryView(plaintext: plaintext)) }
        if let opened { return opened }
        let summary = try AccessTokenSummary(
            try withBody(value, key: key, database: KeySpace.accessTokens) { body throws(FormatError) in
                try AccessToken(decoding: body.fields)
            }
        )
        return try summary.withView { view in Result { () throws(FormatError) in try body(view) } }.get()
    }

    /// An owned copy of the summary of an access-token value (see ``withSummary(_:key:_:)``).
    package func openSummary(_ value: UnsafeRawBufferPointer, key: [UInt8]) throws(FormatError) -> AccessTokenSummary {
        try key.withUnsafeBytes { key in
            Result { () throws(FormatError) in try withSummary(value, key: key) { AccessTokenSummary($0) } }
        }.get()
    }
}
