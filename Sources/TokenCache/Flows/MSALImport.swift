import Foundation
internal import TokenCacheStorage
internal import TokenCacheRecords

/// An import of an MSAL serialized cache: check the whole file, then write it.
///
/// Two passes over the input, because an import is all or nothing by default while a large file is written in
/// bounded transactions: the first pass reads and maps every entry (nothing is written, memory is bounded by one
/// entry), and only a file with no invalid entry (or with ``MSALImportOptions/skipInvalid``) reaches the second,
/// which maps the entries again and writes them in batches. Once the check passed, what can still fail is the
/// store itself (a full disk, a crash): the batches committed before stay, and importing the same file again
/// finishes the job, since the merge rule keeps what is already there.
struct MSALImport {
    let store: TokenStore
    let source: MSALCacheSource
    let options: MSALImportOptions

    /// What the first pass found.
    struct Check {
        var entries = 0
        var rejected: [MSALRejectedEntry] = []
        /// Offsets of the rejected entries, which the second pass skips.
        var rejectedOffsets: Set<Int> = []
    }

    func run(progress: ((MSALImportProgress) -> Void)?) throws -> MSALImportReport {
        guard options.batchSize > 0 else { throw TokenCacheError(.invalidArgument, "the import batch size must be positive") }
        let check = try checkEntries()
        progress?(MSALImportProgress(entriesDone: 0, entriesTotal: check.entries))
        var report = MSALImportReport()
        report.entries = check.entries
        report.rejected = check.rejected
        switch options.mode {
        case .replace: try replace(check, into: &report, progress: progress)
        case .merge: try merge(check, into: &report, progress: progress)
        }
        return report
    }

    // MARK: The first pass

    private func checkEntries() throws -> Check {
        var check = Check()
        var reader = try makeReader()
        while let entry = try next(&reader) {
            guard case .entity = entry.section else {
                _ = try unknownSection(entry)
                continue
            }
            check.entries += 1
            do {
                _ = try MSALEntityMapping.entity(from: entry)
            } catch {
                guard options.skipInvalid else {
                    let hint = error.code == .unsupported ? " (import the other entries with --skip-invalid)" : ""
                    throw TokenCacheError(.invalidArgument, Self.describe(error, entry: entry) + hint)
                }
                check.rejectedOffsets.insert(entry.offset)
                check.rejected.append(rejection(error, entry: entry))
            }
        }
        return check
    }

    /// The error's text without the entry key (made of account identifiers, which no library message shows): the
    /// section, the entry's byte offset, the field and the reason locate it in the file.
    static func describe(_ error: MSALImportError, entry: MSALCacheEntry?) -> String {
        var located = error
        located.key = nil
        if located.section == nil { located.section = entry?.sectionName }
        if located.offset == nil { located.offset = entry?.offset }
        return located.description
    }

    private func rejection(_ error: MSALImportError, entry: MSALCacheEntry) -> MSALRejectedEntry {
        let keyring = store.store.keyring
        return MSALRejectedEntry(
            section: MSALImportError.displayed(entry.sectionName),
            fingerprint: keyring.fingerprint(database: "msal-import/" + entry.sectionName, key: Array((entry.key ?? "").utf8)),
            offset: entry.offset, field: error.field, reason: error.reason
        )
    }

    // MARK: The second pass

    private func merge(_ check: Check, into report: inout MSALImportReport, progress: ((MSALImportProgress) -> Void)?) throws {
        var reader = try makeReader()
        var sections: [String: JSONValue] = [:]
        /// Entry keys of the access tokens this import wrote: tokens of one file may overlap (the lookup's "most
        /// recently cached" then decides), only tokens already stored are superseded.
        var imported: Set<[UInt8]> = []
        var done = 0
        var finished = false
        while !finished {
            var batch: [MSALEntity] = []
            while batch.count < options.batchSize {
                guard let entry = try next(&reader) else {
                    finished = true
                    break
                }
                guard case .entity = entry.section else {
                    sections[entry.sectionName] = try unknownSection(entry)
                    continue
                }
                guard !check.rejectedOffsets.contains(entry.offset) else { continue }
                batch.append(try Self.entity(entry))
            }
            let keptSections = finished ? sections : nil
            // The transaction may run more than once (map growth): its effects are gathered here and kept only
            // when it has committed.
            let (outcome, written) = try store.write { writer in
                var outcome = MSALImportReport()
                var written: Set<[UInt8]> = []
                for entity in batch {
                    try writer.importEntity(entity, alreadyImported: imported, written: &written, report: &outcome)
                }
                if let keptSections, !keptSections.isEmpty {
                    let merged = try writer.store.foreignSections(in: writer.writeTransaction).merging(keptSections) { _, new in new }
                    try writer.store.setForeignSections(merged, now: writer.now, in: writer.writeTransaction)
                }
                return (outcome, written)
            }
            imported.formUnion(written)
            report.add(outcome)
            done += batch.count
            progress?(MSALImportProgress(entriesDone: done + check.rejected.count, entriesTotal: check.entries))
        }
        report.keptSections = sections.keys.sorted()
    }

    private func replace(_ check: Check, into report: inout MSALImportReport, progress: ((MSALImportProgress) -> Void)?) throws {
        let outcome = try store.write { writer in
            var outcome = MSALImportReport()
            outcome.removedByReplace = try writer.removeEverything()
            var reader = try makeReader()
            var sections: [String: JSONValue] = [:]
            var written: Set<[UInt8]> = []
            var done = 0
            while let entry = try next(&reader) {
                guard case .entity = entry.section else {
                    sections[entry.sectionName] = try unknownSection(entry)
                    continue
                }
                guard !check.rejectedOffsets.contains(entry.offset) else { continue }
                try writer.importEntity(try Self.entity(entry), alreadyImported: [], written: &written, report: &outcome)
                done += 1
                if done % options.batchSize == 0 {
                    progress?(MSALImportProgress(entriesDone: done + check.rejected.count, entriesTotal: check.entries))
                }
            }
            try writer.store.setForeignSections(sections, now: writer.now, in: writer.writeTransaction)
            outcome.keptSections = sections.keys.sorted()
            return outcome
        }
        report.add(outcome)
        report.keptSections = outcome.keptSections
        progress?(MSALImportProgress(entriesDone: check.entries, entriesTotal: check.entries))
    }

    // MARK: Reading

    /// An entry of the second pass as its entity. It mapped in the first pass, and mapping is a function of the
    /// bytes; should the file have changed in between, the error is the first pass's.
    private static func entity(_ entry: MSALCacheEntry) throws -> MSALEntity {
        do { return try MSALEntityMapping.entity(from: entry) } catch { throw TokenCacheError(.invalidArgument, describe(error, entry: entry)) }
    }

    private func makeReader() throws -> MSALCacheReader { try source.makeReader() }

    /// The next entry; a document that is not an MSAL cache (bad JSON, wrong nesting) stops the import whatever
    /// the options, since nothing after the fault can be located.
    private func next(_ reader: inout MSALCacheReader) throws -> MSALCacheEntry? { try source.next(&reader) }

    private func unknownSection(_ entry: MSALCacheEntry) throws -> JSONValue {
        do { return try MSALFieldValues.jsonValue(entry.value) } catch {
            throw TokenCacheError(
                .invalidArgument,
                "MSAL cache section \"\(MSALImportError.displayed(entry.sectionName))\" at byte \(entry.offset): "
                    + "it holds a number outside the range of a double")
        }
    }
}

extension MSALCacheSource {
    /// A streaming reader of the document, from its start.
    func makeReader() throws -> MSALCacheReader {
        switch self {
        case .bytes(let bytes):
            return MSALCacheReader(bytes: bytes)
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
                throw TokenCacheError(.invalidArgument, "the MSAL cache file \(MSALImportError.displayed(path)) \(reason)")
            }
            return MSALCacheReader(fileHandle: handle)
        }
    }

    /// The next entry of `reader`, a reader's failure as the `.invalidArgument` error an import gives.
    func next(_ reader: inout MSALCacheReader) throws -> MSALCacheEntry? {
        do { return try reader.next() } catch { throw TokenCacheError(.invalidArgument, MSALImport.describe(error, entry: nil)) }
    }
}

extension MSALImportReport {
    /// Adds the counts of `other` (one batch's).
    mutating func add(_ other: MSALImportReport) {
        written.merge(other.written, uniquingKeysWith: +)
        keptExisting.merge(other.keptExisting, uniquingKeysWith: +)
        accessTokensSuperseded += other.accessTokensSuperseded
        removedByReplace += other.removedByReplace
    }
}

extension CacheWriter {
    /// Writes one imported entity by the import rule (``ImportMerge``): it replaces a stored record of the same
    /// identity only if written later. An access token also replaces the stored tokens of its bucket and alias
    /// group whose scopes intersect its own (the ingest rule), if it was written later than each of them; if one
    /// of them is newer, the imported token is dropped instead, so that no ambiguous pair comes out of a merge.
    /// Tokens written by this same import (`alreadyImported`, `written`) are not compared with each other: a file
    /// may hold overlapping tokens, which the lookup's candidate order resolves.
    func importEntity(
        _ entity: MSALEntity, alreadyImported: Set<[UInt8]>, written: inout Set<[UInt8]>, report: inout MSALImportReport
    ) throws {
        let index = store.keyring.index
        func judge<S: StorableEntity>(_ incoming: S, stamp: (S) -> ImportMerge.Stamp) throws {
            let entryKey = S.storageKey(for: incoming.key, index: index)
            let existing = try? stored(S.self, entryKey: entryKey)
            if let existing, !ImportMerge.incomingWins(existing: stamp(existing.entity), incoming: stamp(incoming)) {
                report.keptExisting[S.kind, default: 0] += 1
                return
            }
            _ = try putStorable(incoming, expectedRevision: nil, continuing: existing?.revision ?? 0, entryKey: entryKey)
            report.written[S.kind, default: 0] += 1
        }
        switch entity {
        case .accessToken(let token): try importAccessToken(token, alreadyImported: alreadyImported, written: &written, report: &report)
        case .refreshToken(let token): try judge(token, stamp: ImportMerge.stamp(of:))
        case .idToken(let token): try judge(token, stamp: ImportMerge.stamp(of:))
        case .account(let account): try judge(account, stamp: ImportMerge.stamp(of:))
        case .appMetadata(let metadata): try judge(metadata, stamp: ImportMerge.stamp(of:))
        }
    }

    private func importAccessToken(
        _ token: AccessToken, alreadyImported: Set<[UInt8]>, written: inout Set<[UInt8]>, report: inout MSALImportReport
    ) throws {
        let index = store.keyring.index
        let bucket = AccessToken.bucketPrefix(
            homeAccountID: token.homeAccountID, clientID: token.clientID, realm: token.realm, tokenType: token.tokenType,
            keyID: token.keyID, index: index)
        let entryKey = AccessToken.entryKey(for: token.key, bucket: bucket, index: index)
        let scopes = try ScopeSet(parsing: token.target)
        let incoming = ImportMerge.stamp(of: token)
        var doomed: [[UInt8]] = []
        var superseded = 0
        var previousRevision: UInt64 = 0
        var newerStored = false
        try writeTransaction.forEach(in: DatabaseName.accessTokens, prefix: bucket) { key, value in
            // A damaged record in the bucket is left for `verify` and repair, not silently deleted.
            guard let summary = try? store.openSummary(value, key: Array(key)), let storedScopes = try? summary.scopes else { return true }
            let storedEntryKey = index.digest("at-entry", summary.environment, summary.canonicalTarget, after: bucket)
            let sameIdentity = storedEntryKey == entryKey
            guard sameIdentity || (store.aliases.areAliases(summary.environment, token.environment)
                && IntersectDelete.evicts(newTarget: scopes, storedTarget: storedScopes))
            else { return true }
            if !sameIdentity && (alreadyImported.contains(storedEntryKey) || written.contains(storedEntryKey)) { return true }
            let stamp = ImportMerge.Stamp(writtenAt: summary.cachedAt, expiresOn: summary.expiresOn)
            if ImportMerge.incomingWins(existing: stamp, incoming: incoming) {
                doomed.append(Array(key))
                if sameIdentity {
                    previousRevision = (try? store.openRevision(value, slot: store.slot(DatabaseName.accessTokens, Array(key)))) ?? 0
                } else {
                    superseded += 1
                }
            } else {
                newerStored = true
            }
            return true
        }
        guard !newerStored else {
            // Something newer already answers for (part of) these scopes; nothing of the bucket changes.
            report.keptExisting[.accessToken, default: 0] += 1
            return
        }
        _ = try deleteRecords(AccessToken.self, keys: doomed)
        report.accessTokensSuperseded += superseded
        _ = try putStorable(token, expectedRevision: nil, continuing: previousRevision, entryKey: entryKey)
        written.insert(entryKey)
        report.written[.accessToken, default: 0] += 1
    }

    /// Deletes every record of the five kinds and the kept MSAL sections; returns how many records.
    func removeEverything() throws -> Int {
        var removed = 0
        for kind in EntityKind.allCases {
            let database = DatabaseName.forKind(kind)
            var keys: [[UInt8]] = []
            try writeTransaction.forEach(in: database, prefix: []) { key, _ in
                keys.append(Array(key))
                return true
            }
            for key in keys where try writeTransaction.delete(in: database, key: key) { removed += 1 }
        }
        try store.setForeignSections([:], now: now, in: writeTransaction)
        return removed
    }
}
