internal import TokenCache
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
        /// The unknown top-level sections, to keep.
        var sections: [String: JSONValue] = [:]
    }

    func run(progress: ((MSALImportProgress) -> Void)?) throws -> MSALImportReport {
        guard options.batchSize > 0 else { throw TokenCacheError(.invalidArgument, "the import batch size must be positive") }
        guard options.batchSize <= MSALImportOptions.maximumEntriesPerTransaction else {
            throw TokenCacheError(
                .invalidArgument,
                "the import batch size \(options.batchSize) is larger than \(MSALImportOptions.maximumEntriesPerTransaction), the most "
                    + "entries one transaction applies (a longer transaction would keep the store's other writers waiting)")
        }
        // A pipe or a device (`<(cat cache.json)`, /dev/stdin) cannot be read twice: it is read once, into memory.
        let source = try self.source.readableTwice()
        let identity = try source.fileIdentity()
        let check = try checkEntries(source)
        // The second pass must read what the first one checked.
        guard try source.fileIdentity() == identity else {
            throw TokenCacheError(
                .conflict, "the MSAL cache file changed while it was checked (another program wrote it); nothing was imported")
        }
        progress?(MSALImportProgress(entriesDone: 0, entriesTotal: check.entries))
        var report = MSALImportReport()
        report.entries = check.entries
        report.rejected = check.rejected
        switch options.mode {
        case .replace: try replace(check, from: source, into: &report, progress: progress)
        case .merge: try merge(check, from: source, into: &report, progress: progress)
        }
        return report
    }

    // MARK: The first pass

    private func checkEntries(_ source: MSALCacheSource) throws -> Check {
        var check = Check()
        var reader = try source.makeReader()
        var keys = MSALDuplicateKeys(index: store.store.keyring.index)
        while let entry = try source.next(&reader) {
            guard case .entity = entry.section else {
                check.sections[entry.sectionName] = try unknownSection(entry)
                continue
            }
            check.entries += 1
            if let earlier = keys.earlierEntry(sameKeyAs: entry) {
                // MSAL keeps the last entry of a key: the earlier one is what is rejected.
                guard options.skipInvalid else {
                    throw TokenCacheError(
                        .invalidArgument,
                        "MSAL cache section \"\(MSALImportError.displayed(entry.sectionName))\" at byte \(entry.offset): the entry has the same "
                            + "key (fingerprint \(fingerprint(of: entry))) as the entry at byte \(earlier), and MSAL reads only the last "
                            + "(import the last of each key with --skip-invalid)")
                }
                if check.rejectedOffsets.insert(earlier).inserted {
                    check.rejected.append(
                        MSALRejectedEntry(
                            section: MSALImportError.displayed(entry.sectionName), fingerprint: fingerprint(of: entry), offset: earlier,
                            field: nil, reason: MSALDuplicateKeys.reason))
                }
            }
            guard check.entries <= MSALImportOptions.maximumEntries else {
                throw TokenCacheError(
                    .invalidArgument,
                    "the MSAL cache file holds more than \(MSALImportOptions.maximumEntries) entries, the most an import takes "
                        + "(entry at byte \(entry.offset)); nothing was imported")
            }
            do throws(MSALImportError) {
                let entity = try MSALEntityMapping.entity(from: entry)
                // What the store would refuse at write time is refused here, before anything is written.
                do { try Self.checkStorable(entity) } catch {
                    throw MSALImportError(.invalidValue, error.message)
                }
            } catch {
                guard options.skipInvalid else {
                    let hint = error.code == .unsupported ? " (import the other entries with --skip-invalid)" : ""
                    throw TokenCacheError(.invalidArgument, Self.describe(error, entry: entry) + hint)
                }
                check.rejectedOffsets.insert(entry.offset)
                check.rejected.append(rejection(error, entry: entry))
            }
        }
        // The sections as they will be kept: with the store's own when merging.
        let kept = options.mode == .merge ? try store.read { try $0.store.foreignSections(in: $0.transaction) } : [:]
        _ = try RecordStore.foreignSectionsBody(kept.merging(check.sections) { _, new in new }, now: 0)
        return check
    }

    /// Throws the store's refusal of `entity`'s record (too large for the format), without writing it.
    static func checkStorable(_ entity: MSALEntity) throws(TokenCacheError) {
        switch entity {
        case .accessToken(let token): _ = try RecordStore.plaintexts(of: token, revision: 1, now: 0)
        case .refreshToken(let token): _ = try RecordStore.plaintexts(of: token, revision: 1, now: 0)
        case .idToken(let token): _ = try RecordStore.plaintexts(of: token, revision: 1, now: 0)
        case .account(let account): _ = try RecordStore.plaintexts(of: account, revision: 1, now: 0)
        case .appMetadata(let metadata): _ = try RecordStore.plaintexts(of: metadata, revision: 1, now: 0)
        }
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
        MSALRejectedEntry(
            section: MSALImportError.displayed(entry.sectionName), fingerprint: fingerprint(of: entry), offset: entry.offset,
            field: error.field, reason: error.reason)
    }

    /// The keyed fingerprint of the entry's section and key, which messages show instead of the key.
    private func fingerprint(of entry: MSALCacheEntry) -> String {
        store.store.keyring.fingerprint(database: "msal-import/" + entry.sectionName, key: Array((entry.key ?? "").utf8))
    }

    // MARK: The second pass

    private func merge(
        _ check: Check, from source: MSALCacheSource, into report: inout MSALImportReport, progress: ((MSALImportProgress) -> Void)?
    ) throws {
        var reader = try source.makeReader()
        let sections = check.sections
        /// The records this import wrote: tokens of one file may overlap (the lookup's "most recently cached" then
        /// decides), only tokens already stored are superseded; and an entry meeting one of them is merged within
        /// the file, not a stored record kept.
        var imported: Set<RecordAddress> = []
        let buckets = MSALImportBuckets(storeEmptied: false)
        var done = 0
        var finished = false
        while !finished {
            // Read, mapped and keyed outside the transaction: inside it, only the rule's reads and the writes.
            var batch: [MSALImportItem] = []
            while batch.count < options.batchSize {
                guard let entry = try source.next(&reader) else {
                    finished = true
                    break
                }
                guard case .entity = entry.section else { continue }
                guard !check.rejectedOffsets.contains(entry.offset) else { continue }
                batch.append(try MSALImportItem(Self.entity(entry), index: store.store.keyring.index))
            }
            let keptSections = finished ? sections : nil
            // The transaction may run more than once (map growth): its effects are gathered here and kept only
            // when it has committed.
            let (outcome, written) = try store.write { writer in
                buckets.begin(lastCommit: writer.store.backend.lastCommitID)
                var outcome = MSALImportReport()
                var written: Set<RecordAddress> = []
                for item in batch {
                    try writer.importEntity(item, buckets: buckets, alreadyImported: imported, written: &written, report: &outcome)
                }
                var wroteSections = false
                if let keptSections, !keptSections.isEmpty {
                    let merged = try writer.store.foreignSections(in: writer.writeTransaction).merging(keptSections) { _, new in new }
                    try writer.store.setForeignSections(merged, now: writer.now, in: writer.writeTransaction)
                    wroteSections = true
                }
                buckets.wrote = buckets.wrote || wroteSections || !written.isEmpty || writer.accessTokensEvicted > 0
                return (outcome, written)
            }
            buckets.committed()
            imported.formUnion(written)
            report.add(outcome)
            done += batch.count
            progress?(MSALImportProgress(entriesDone: done + check.rejected.count, entriesTotal: check.entries))
        }
        report.keptSections = sections.keys.sorted()
        report.work = buckets.work
    }

    private func replace(
        _ check: Check, from source: MSALCacheSource, into report: inout MSALImportReport, progress: ((MSALImportProgress) -> Void)?
    ) throws {
        // Read, mapped and keyed before the transaction, which the entry limit keeps short.
        guard check.entries <= MSALImportOptions.maximumReplaceEntries else {
            throw TokenCacheError(
                .invalidArgument,
                "the MSAL cache file holds \(check.entries) entries, more than the \(MSALImportOptions.maximumReplaceEntries) a "
                    + "replacing import writes in its one transaction; nothing was imported (merge it instead, which commits in batches)")
        }
        var items: [MSALImportItem] = []
        var reader = try source.makeReader()
        while let entry = try source.next(&reader) {
            guard case .entity = entry.section, !check.rejectedOffsets.contains(entry.offset) else { continue }
            items.append(try MSALImportItem(Self.entity(entry), index: store.store.keyring.index))
        }
        let outcome = try store.write { writer in
            var outcome = MSALImportReport()
            // Revisions continue across the replacement, so that a compare-and-swap written against the old cache
            // cannot succeed against a re-imported record that happens to restart at the same revision.
            let (removed, revisions) = try writer.removeEverything()
            outcome.removedByReplace = removed
            // Nothing stored is left to compare with: the file's tokens are judged only against each other's
            // identities, and no bucket is read.
            let buckets = MSALImportBuckets(storeEmptied: true)
            var written: Set<RecordAddress> = []
            for item in items {
                try writer.importEntity(item, buckets: buckets, alreadyImported: [], written: &written, report: &outcome, priorRevisions: revisions)
            }
            try writer.store.setForeignSections(check.sections, now: writer.now, in: writer.writeTransaction)
            return outcome
        }
        report.add(outcome)
        report.keptSections = check.sections.keys.sorted()
        progress?(MSALImportProgress(entriesDone: check.entries, entriesTotal: check.entries))
    }

    // MARK: Reading

    /// An entry of the second pass as its entity. It mapped in the first pass, and mapping is a function of the
    /// bytes; should the file have changed in between, the error is the first pass's.
    private static func entity(_ entry: MSALCacheEntry) throws -> MSALEntity {
        do { return try MSALEntityMapping.entity(from: entry) } catch { throw TokenCacheError(.invalidArgument, describe(error, entry: entry)) }
    }

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
    /// What identifies one version of a file: device, inode, size, and modification and change times.
    struct FileIdentity: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, modified: [Int], changed: [Int]
    }

    /// The identity of a `.file` source now (nil for bytes): the second pass of an import refuses a file that changed.
    func fileIdentity() throws -> FileIdentity? {
        guard case .file(let path) = self else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else { throw Self.unreadable(path) }
        return FileIdentity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modified: [status.st_mtim.tv_sec, status.st_mtim.tv_nsec], changed: [status.st_ctim.tv_sec, status.st_ctim.tv_nsec])
    }

    /// This source, or, for a file that is not a regular file (a pipe, a device), its bytes read once.
    func readableTwice() throws -> MSALCacheSource {
        guard case .file(let path) = self else { return self }
        var status = stat()
        guard stat(path, &status) == 0 else { throw Self.unreadable(path) }
        if (status.st_mode & S_IFMT) == S_IFREG { return self }
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() else { throw Self.unreadable(path) }
        return .bytes(Array(data))
    }

    static func unreadable(_ path: String) -> TokenCacheError {
        let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
        return TokenCacheError(.invalidArgument, "the MSAL cache file \(MSALImportError.displayed(path)) \(reason)")
    }

    /// A streaming reader of the document, from its start.
    func makeReader() throws -> MSALCacheReader {
        switch self {
        case .bytes(let bytes):
            return MSALCacheReader(bytes: bytes)
        case .file(let path):
            guard let handle = FileHandle(forReadingAtPath: path) else { throw Self.unreadable(path) }
            return MSALCacheReader(fileHandle: handle)
        }
    }

    /// The next entry of `reader`, a reader's failure as the `.invalidArgument` error an import gives.
    func next(_ reader: inout MSALCacheReader) throws -> MSALCacheEntry? {
        do { return try reader.next() } catch { throw TokenCacheError(.invalidArgument, MSALImport.describe(error, entry: nil)) }
    }
}

extension MSALImportReport {
    /// Counts one entry of `kind` in `counts`, or in ``mergedInFile`` when an earlier entry of the file holds its
    /// identity.
    mutating func count(_ kind: EntityKind, in counts: WritableKeyPath<MSALImportReport, [EntityKind: Int]>, mergedInFile merged: Bool) {
        self[keyPath: merged ? \.mergedInFile : counts][kind, default: 0] += 1
    }

    /// Adds the counts of `other` (one batch's).
    mutating func add(_ other: MSALImportReport) {
        written.merge(other.written, uniquingKeysWith: +)
        keptExisting.merge(other.keptExisting, uniquingKeysWith: +)
        mergedInFile.merge(other.mergedInFile, uniquingKeysWith: +)
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
    /// may hold overlapping tokens, which the lookup's candidate order resolves. An entry whose identity an earlier
    /// entry of the file already wrote is judged by the same rule but counted in
    /// ``MSALImportReport/mergedInFile``: the store held no record of it before.
    func importEntity(
        _ item: MSALImportItem, buckets: MSALImportBuckets, alreadyImported: Set<RecordAddress>, written: inout Set<RecordAddress>,
        report: inout MSALImportReport, priorRevisions: [RecordAddress: UInt64] = [:]
    ) throws {
        let address = item.address
        let fromThisFile = alreadyImported.contains(address) || written.contains(address)
        func judge<S: StorableEntity>(_ incoming: S, wins: (S, S) -> Bool) throws {
            let existing = try storedOrDamaged(S.self, entryKey: address.key)
            if let existing, !wins(existing.entity, incoming) {
                report.count(S.kind, in: \.keptExisting, mergedInFile: fromThisFile)
                return
            }
            let prior = max(existing?.revision ?? 0, priorRevisions[address] ?? 0)
            _ = try putStorable(incoming, expectedRevision: nil, continuing: prior, entryKey: address.key)
            written.insert(address)
            report.count(S.kind, in: \.written, mergedInFile: fromThisFile)
        }
        switch item.entity {
        case .accessToken(let token):
            let wrote = try importAccessToken(
                token, item: item, buckets: buckets, isImported: { alreadyImported.contains($0) || written.contains($0) },
                fromThisFile: fromThisFile, report: &report, priorRevisions: priorRevisions)
            if wrote { written.insert(address) }
        case .refreshToken(let token): try judge(token, wins: ImportMerge.refreshTokenWins)
        case .idToken(let token): try judge(token, wins: ImportMerge.idTokenWins)
        case .account(let account): try judge(account, wins: ImportMerge.laterWins(ImportMerge.stamp(of:)))
        case .appMetadata(let metadata): try judge(metadata, wins: ImportMerge.laterWins(ImportMerge.stamp(of:)))
        }
    }

    /// The stored entity under `entryKey`; a damaged record counts as absent (the import's write replaces it, as
    /// any unconditional write does), every other failure is thrown.
    private func storedOrDamaged<S: StorableEntity>(_ type: S.Type, entryKey: [UInt8]) throws -> StoredEntity<S>? {
        do { return try stored(S.self, entryKey: entryKey) } catch let error as TokenCacheError where error.code == .corruptRecord { return nil }
    }

    /// The access-token half of ``importEntity(_:buckets:alreadyImported:written:report:priorRevisions:)``: the
    /// stored record of the token's identity is read by its key, the other stored tokens of its bucket are met
    /// through the bucket's ``MSALImportBucketIndex``. Writes nothing when a stored token is newer; returns whether
    /// it wrote the token.
    private func importAccessToken(
        _ token: AccessToken, item: MSALImportItem, buckets: MSALImportBuckets, isImported: (RecordAddress) -> Bool,
        fromThisFile: Bool, report: inout MSALImportReport, priorRevisions: [RecordAddress: UInt64]
    ) throws -> Bool {
        guard let plan = item.accessToken else { return false }
        let entryKey = item.address.key
        let incoming = ImportMerge.stamp(of: token)
        if let existing = try storedOrDamaged(AccessToken.self, entryKey: entryKey),
            !ImportMerge.incomingWins(existing: ImportMerge.stamp(of: existing.entity), incoming: incoming)
        {
            report.count(.accessToken, in: \.keptExisting, mergedInFile: fromThisFile)
            return false
        }
        let verdict = try buckets.withIndex(of: plan.bucket, in: self, isImported: isImported) { index in
            index.verdict(scopes: plan.scopes, environment: token.environment, stamp: incoming, entryKey: entryKey, aliases: store.aliases)
        }
        guard case .supersedes(let superseded) = verdict else {
            // Something newer already answers for (part of) these scopes; nothing of the bucket changes.
            report.count(.accessToken, in: \.keptExisting, mergedInFile: fromThisFile)
            return false
        }
        var doomed: [[UInt8]] = []
        for key in superseded {
            if let location = try store.accessTokenLocation(entryKey: key, damagedMayMatch: false, in: writeTransaction) { doomed.append(location) }
        }
        report.accessTokensSuperseded += try deleteRecords(AccessToken.self, keys: doomed)
        // The stored record of this identity, if any, is the import's now.
        try buckets.withIndex(of: plan.bucket, in: self, isImported: isImported) { $0.remove(entryKey: entryKey) }
        // After a replacement, the revisions the records of this identity had (under its entry key, or as its
        // bucket's lone token under the bucket prefix) are continued.
        var previousRevision: UInt64 = 0
        for key in [entryKey, plan.bucket] { previousRevision = max(previousRevision, priorRevisions[RecordAddress(kind: .accessToken, key: key)] ?? 0) }
        _ = try putStorable(token, expectedRevision: nil, continuing: previousRevision, entryKey: entryKey)
        report.count(.accessToken, in: \.written, mergedInFile: fromThisFile)
        return true
    }

    /// Deletes every record of the five kinds and the kept MSAL sections; returns how many records, and the revision
    /// each had (a damaged one counts as none).
    func removeEverything() throws -> (count: Int, revisions: [RecordAddress: UInt64]) {
        var revisions: [RecordAddress: UInt64] = [:]
        for kind in EntityKind.allCases {
            let database = KeySpace(kind)
            var keys: [[UInt8]] = []
            try writeTransaction.forEach(in: database, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                let key = Array(key)
                revisions[RecordAddress(kind: kind, key: key)] = (try? store.openRevision(value, in: database, key: key)) ?? 0
                keys.append(key)
                return true
            } } }
            for key in keys { _ = try writeTransaction.delete(in: database, key: key) }
        }
        try store.setForeignSections([:], now: now, in: writeTransaction)
        return (revisions.count, revisions)
    }
}

/// A record's place: its kind and storage key.
struct RecordAddress: Hashable {
    var kind: EntityKind
    var key: [UInt8]
}
