internal import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

/// An entry of an MSAL cache whose content a read-back did not find in the store: where it is and why, never its
/// content.
public struct MSALUnverifiedEntry: Sendable, Hashable {
    /// The section as written, escaped for display.
    public var section: String
    /// The keyed fingerprint an import gives the entry (``MSALRejectedEntry/fingerprint``); for an unknown
    /// section, of its name.
    public var fingerprint: String
    /// Byte offset of the entry's value in the file.
    public var offset: Int
    /// A fixed phrase: why.
    public var reason: String
}

/// What ``TokenStore/verifyMSALImport(from:)`` found: whether the store holds everything an MSAL cache holds, so
/// that the file can be deleted without losing a credential.
///
/// An entity entry is **verified** when the store holds its identity and
/// - the same secret (``identical``; accounts and app metadata, which carry none, need only their identity), or
/// - a record the import rule (``TokenStore/importMSAL(from:options:progress:)``) prefers to the entry, having been
///   written *strictly* later (``superseded``): a later `cached_at` (refresh tokens: `last_modification_time`; ID
///   tokens: the JWT's `iat`), then a later `expires_on` (ID tokens: `exp`). For an access token this may also be
///   a stored token of its bucket and cloud whose scopes intersect its own (the token that made the import drop
///   it), or
/// - for a refresh or ID token, a record written at the same time with another secret that another entry of the
///   same file holds (``merged``): the file named the identity twice (MSAL Python keeps a refresh token per scope
///   set, several written in one second), and the store keeps one of them by the import rule's tie-break.
///
/// Not verified, on purpose: a stored access or refresh token of the same identity written at the same time
/// with another secret that the file does not hold. The import rule keeps the stored one on a tie (so
/// re-importing changes nothing), but nothing says the file's token is worth less; with the file kept, it is
/// not lost.
///
/// Every unknown top-level section must be stored (for export) with the same value. An entry that does not map
/// (an import with ``MSALImportOptions/skipInvalid`` skipped it) is never verified.
public struct MSALImportVerification: Sendable, Hashable {
    /// Entity entries in the file.
    public var entries = 0
    /// Entries whose identity the store holds with the same secret (or, without a secret, at all).
    public var identical = 0
    /// Entries whose identity the store holds with a record written strictly later.
    public var superseded = 0
    /// Entries whose identity the store holds with another entry of the same file, written at the same time.
    public var merged = 0
    /// Entries and sections not found in the store as they are or newer.
    public var unverified: [MSALUnverifiedEntry] = []

    /// Whether everything the file holds is in the store.
    public var isComplete: Bool { unverified.isEmpty }
}

/// The read-back: one read transaction (one snapshot), one streaming pass over the file.
struct MSALImportReadBack {
    let store: TokenStore
    let source: MSALCacheSource

    /// What the store says of one entity entry.
    enum Verdict: Equatable {
        case identical
        case superseded
        /// Another secret written at the same time: verified only if the file holds the stored one too (then the
        /// entry is merged), which the end of the pass decides.
        case tied(RecordAddress, String)
        case missing(String)
    }

    func run() throws -> MSALImportVerification {
        try store.read { reader in
            var result = MSALImportVerification()
            var file = try source.makeReader()
            var sections: [(name: String, value: JSONValue?, offset: Int)] = []
            let keyring = reader.store.keyring
            func unverified(_ entry: MSALCacheEntry, _ reason: String) {
                result.unverified.append(
                    MSALUnverifiedEntry(
                        section: MSALImportError.displayed(entry.sectionName),
                        fingerprint: keyring.fingerprint(database: "msal-import/" + entry.sectionName, key: Array((entry.key ?? "").utf8)),
                        offset: entry.offset, reason: reason))
            }
            /// Identities of which the file holds the stored record, and entries tied with a stored record.
            var heldByFile: Set<RecordAddress> = []
            var ties: [(entry: MSALCacheEntry, address: RecordAddress, reason: String)] = []
            while let entry = try source.next(&file) {
                guard case .entity = entry.section else {
                    sections.append((entry.sectionName, try? MSALFieldValues.jsonValue(entry.value), entry.offset))
                    continue
                }
                result.entries += 1
                guard let entity = try? MSALEntityMapping.entity(from: entry) else {
                    unverified(entry, "the entry is invalid and was not imported")
                    continue
                }
                switch try reader.verdict(on: entity) {
                case .identical:
                    result.identical += 1
                    heldByFile.insert(reader.address(of: entity))
                case .superseded: result.superseded += 1
                case .tied(let address, let reason): ties.append((entry, address, reason))
                case .missing(let reason): unverified(entry, reason)
                }
            }
            for tie in ties {
                if heldByFile.contains(tie.address) { result.merged += 1 } else { unverified(tie.entry, tie.reason) }
            }
            if !sections.isEmpty {
                let stored = try reader.store.foreignSections(in: reader.transaction)
                for section in sections where section.value == nil || stored[section.name] != section.value {
                    result.unverified.append(
                        MSALUnverifiedEntry(
                            section: MSALImportError.displayed(section.name),
                            fingerprint: keyring.fingerprint(database: "msal-import/" + section.name, key: []),
                            offset: section.offset, reason: "the unknown section is not kept in the store as it is"))
                }
            }
            return result
        }
    }
}

extension CacheReader {
    /// Whether the store holds `entity` (see ``MSALImportVerification``).
    func verdict(on entity: MSALEntity) throws -> MSALImportReadBack.Verdict {
        let index = store.keyring.index
        let absent = MSALImportReadBack.Verdict.missing("the store does not hold this identity")
        let damaged = MSALImportReadBack.Verdict.missing("the stored record of this identity is damaged")
        /// The verdict on the stored record of the entity's identity; a damaged one is reported, never taken for
        /// the entity.
        func judge<S: StorableEntity>(_ type: S.Type, _ entryKey: [UInt8], _ body: (S) -> MSALImportReadBack.Verdict) throws
            -> MSALImportReadBack.Verdict
        {
            do {
                guard let stored = try stored(S.self, entryKey: entryKey)?.entity else { return absent }
                return body(stored)
            } catch let error as TokenCacheError where error.code == .corruptRecord {
                return damaged
            }
        }
        switch entity {
        // Accounts and app metadata carry no write time, so the import rule keeps a stored record of the identity
        // whatever it holds: the file's record is in the store only if the stored one is equal to it (an app
        // metadata record without the file's `family_id` would lose the family, and with it family refresh).
        case .account(let account):
            return try judge(Account.self, Account.storageKey(for: account.key, index: index)) {
                $0 == account ? .identical : .missing("the store holds this account with other fields")
            }
        case .appMetadata(let metadata):
            return try judge(AppMetadata.self, AppMetadata.storageKey(for: metadata.key, index: index)) {
                $0 == metadata ? .identical : .missing("the store holds this app metadata with other fields")
            }
        case .idToken(let token):
            let entryKey = IDToken.storageKey(for: token.key, index: index)
            return try judge(IDToken.self, entryKey) { stored in
                if stored == token { return .identical }
                return Self.timedVerdict(
                    stored: ImportMerge.stamp(of: stored), entry: ImportMerge.stamp(of: token), sameSecret: stored.secret == token.secret,
                    address: RecordAddress(kind: .idToken, key: entryKey), kind: "ID token")
            }
        case .refreshToken(let token):
            let entryKey = RefreshToken.storageKey(for: token.key, index: index)
            return try judge(RefreshToken.self, entryKey) { stored in
                if stored.secret == token.secret { return .identical }
                return Self.timedVerdict(
                    stored: ImportMerge.stamp(of: stored), entry: ImportMerge.stamp(of: token), sameSecret: false,
                    address: RecordAddress(kind: .refreshToken, key: entryKey), kind: "refresh token")
            }
        case .accessToken(let token):
            return try accessTokenVerdict(token, absent: absent, damaged: damaged)
        }
    }

    /// The verdict on a stored refresh or ID token of the entry's identity that is not the entry itself: superseded
    /// when written strictly later, tied when written at the same time with another secret, else missing.
    private static func timedVerdict(
        stored: ImportMerge.Stamp, entry: ImportMerge.Stamp, sameSecret: Bool, address: RecordAddress, kind: String
    ) -> MSALImportReadBack.Verdict {
        if later(stored, than: entry) { return .superseded }
        let reason = "the store holds another \(kind) of this identity, not written later"
        if !sameSecret && !later(entry, than: stored) { return .tied(address, reason) }
        return .missing(reason)
    }

    /// Where the record of `entity`'s identity is stored (access tokens: under their entry key).
    func address(of entity: MSALEntity) -> RecordAddress { MSALImportItem.address(of: entity, index: store.keyring.index) }

    /// Written strictly later: the stored record would win if it were the one imported over the entry.
    private static func later(_ stored: ImportMerge.Stamp, than entry: ImportMerge.Stamp) -> Bool {
        ImportMerge.incomingWins(existing: entry, incoming: stored)
    }

    private func accessTokenVerdict(
        _ token: AccessToken, absent: MSALImportReadBack.Verdict, damaged: MSALImportReadBack.Verdict
    ) throws -> MSALImportReadBack.Verdict {
        let index = store.keyring.index
        let bucket = AccessToken.bucketPrefix(for: token.key, index: index)
        let entryKey = AccessToken.entryKey(for: token.key, bucket: bucket, index: index)
        let incoming = ImportMerge.stamp(of: token)
        do {
            if let stored = try stored(AccessToken.self, entryKey: entryKey)?.entity {
                if stored.secret == token.secret { return .identical }
                if Self.later(ImportMerge.stamp(of: stored), than: incoming) { return .superseded }
                return .missing("the store holds another access token of this identity, not written later")
            }
        } catch let error as TokenCacheError where error.code == .corruptRecord {
            return damaged
        }
        // Not stored under its identity: the import drops an access token when a stored one of its bucket and
        // cloud, for intersecting scopes, is newer (and a later write may have replaced it the same way).
        let scopes = try ScopeSet(parsing: token.target)
        var supersededBy = false
        try transaction.forEach(in: KeySpace.accessTokens, prefix: bucket) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
            guard let summary = try? store.openSummary(value, key: Array(key)), let storedScopes = try? summary.scopes,
                store.aliases.areAliases(summary.environment, token.environment),
                IntersectDelete.evicts(newTarget: scopes, storedTarget: storedScopes)
            else { return true }
            let stamp = ImportMerge.Stamp(writtenAt: summary.cachedAt, expiresOn: summary.expiresOn)
            if Self.later(stamp, than: incoming) {
                supersededBy = true
                return false
            }
            return true
        } } }
        return supersededBy ? .superseded : absent
    }
}
