import Foundation
import Synchronization
package import TokenCacheStorage
internal import TokenCacheSodium
package import TokenCacheRecords

/// A store's records as the domain sees them: a backend (``RecordBackend``) and the keyring that seals, opens and
/// indexes what goes into it, with the header checks that keep every write under the rules the store was opened with.
package final class RecordStore: Sendable {
    package let backend: any RecordBackend
    package let keyring: Keyring
    let readOnly: Bool
    /// The configured alias groups: every lookup, intersect-delete and sign-out of this store matches hosts by them,
    /// whichever doorway (``TokenStore`` or a transaction's reader) it came through.
    package let aliases: EnvironmentAliases
    /// The header as this store was opened with it.
    let headerBytes: [UInt8]
    /// The header every write transaction checks is still the stored one, and the data key it seals under: the opened
    /// one, until a write meets a header another handle changed in a way this one can follow (``checkHeaderUnchanged(in:)``).
    private let sealing: Mutex<SealingHeader>

    private struct SealingHeader {
        var bytes: [UInt8]
        var keyID: UInt32
        var recordKey: RecordKey
    }
    /// Where the next opportunistic sweep of expired access tokens starts (``CacheWriter/sweepExpiredAccessTokens(now:protecting:)``):
    /// kept in memory only, since a sweep that starts over after a restart loses nothing.
    /// With the write that left it there: writers of one process publish after their commits, in any order, and a
    /// later commit's cursor is never overwritten by an earlier one's.
    let sweepCursor = Mutex<(commit: Int, key: [UInt8])>((0, []))

    /// Where the records live, for messages (a directory, or the in-memory name).
    package var directory: String { backend.location }

    /// The root key the store was opened with, kept to unwrap data keys added to the header after this store was
    /// opened (a data-key rotation another handle began): records sealed under them stay readable here.
    private let root: SecureKey
    /// Record keys of data keys added to the header since this store was opened, learned when first met.
    private let laterRecordKeys = Mutex<[UInt32: RecordKey]>([:])

    /// Whether creating this store completed one whose creation an older build had left without a header.
    let completedInterruptedCreation: Bool
    /// Whether the backend serves a read plan in one call (a server): a lookup then fetches its ranges in one round
    /// trip instead of one per read. Decided once, so that a local store's lookup pays no type check.
    package let readsByPlan: Bool
    /// The highest revision read under each key, on a store several hosts share through a server
    /// (``RevisionFloorKeeping``): nil on a store of files, which has no server to roll rows back behind its back.
    package let revisionMarks: RevisionMarks?

    private init(
        backend: any RecordBackend, keyring: Keyring, root: SecureKey, readOnly: Bool, aliases: EnvironmentAliases,
        completedInterruptedCreation: Bool = false
    ) {
        self.completedInterruptedCreation = completedInterruptedCreation
        readsByPlan = backend is any RangeFetching
        revisionMarks = backend is any RevisionFloorKeeping ? RevisionMarks() : nil
        self.backend = backend
        self.keyring = keyring
        self.root = root
        self.readOnly = readOnly
        self.aliases = aliases
        headerBytes = keyring.header.encoded()
        sealing = Mutex(SealingHeader(bytes: headerBytes, keyID: keyring.activeKeyID, recordKey: keyring.activeRecordKey))
    }

    /// Opens an existing store (`create == false`) or creates a new one (`create == true`), where `options.storage`
    /// says: a directory, or memory (only `create` finds a store in memory, new).
    package static func open(_ options: Options, create: Bool, now: Int64) throws -> RecordStore {
        if create, options.readOnly { throw TokenCacheError(.readOnly, "cannot create a store read-only") }
        // Before anything is made: a cipher this machine cannot run leaves no directory and no file behind.
        if create, let cipher = options.cipher, !cipher.isAvailable { throw unavailable(cipher, "cannot create a store sealed with it") }
        // A new store's root key is in hand before anything is created: a missing key file, a malformed key or an
        // empty passphrase leaves no directory and no file behind, so the next attempt starts from nothing.
        let newRoot = create ? try options.rootKey.newRootKey() : nil
        let storage = options.storage
        // A store already there, without a header, is a creation an older build left unfinished: this one completes it.
        let storeExisted = create && storage.holdsStore()
        // A kind without a directory (memory) has nothing to make or check here: its open says whether there is a store.
        if storage.directory != nil {
            if create { try prepareNewStore(storage) } else { try checkExistingStore(storage) }
        }
        let backend: any RecordBackend
        do { backend = try storage.open(readOnly: options.readOnly, create: create) } catch {
            throw TokenCacheError.wrap(error, directory: options.name)
        }
        return try open(backend, options: options, newRoot: newRoot, completing: storeExisted, now: now)
    }

    /// Makes the directory of a store about to be created (0700, with missing parents) and checks that it and the
    /// store's files already in it are this user's alone.
    private static func prepareNewStore(_ storage: any StorageLocation) throws(TokenCacheError) {
        if let directory = storage.directory { try FileSystem.makeDirectory(directory) }
        try checkPrivate(storage)
    }

    /// Throws `.storeNotFound` unless a store is at `storage`, and `.insecurePermissions` unless its directory and
    /// files are this user's alone.
    package static func checkExistingStore(_ storage: any StorageLocation) throws(TokenCacheError) {
        if !storage.holdsStore() {
            if let directory = storage.directory, FileSystem.exists(directory), !FileSystem.isDirectory(directory) {
                throw TokenCacheError(.storeNotFound, "\(directory) is a file, not a store: a store is a directory")
            }
            throw TokenCacheError(.storeNotFound, "no token cache at \(storage.location) (create one with `cachetool init`)")
        }
        try checkPrivate(storage)
    }

    /// The store directory and every store file in it must be owned by this user and closed to others (a security
    /// rule of the library, whichever backend keeps the files).
    private static func checkPrivate(_ storage: any StorageLocation) throws(TokenCacheError) {
        guard let directory = storage.directory else { return }
        try FileSystem.checkPrivate(directory, what: "store directory", fix: "chmod 700 \(directory)")
        for file in storage.files where FileSystem.exists(file.path) {
            try FileSystem.checkPrivate(file.path, what: "store file", fix: "chmod 600 \(file.path)")
        }
    }

    /// Reads (or, creating, writes) the header in `backend`, unlocks the keyring, and upgrades an older format.
    /// `newRoot` is the root key of a store being created; nil opens an existing one. `completing` says that the data
    /// file of a store being created was there before (reported back as ``completedInterruptedCreation``).
    private static func open(
        _ backend: any RecordBackend, options: Options, newRoot: NewRootKey?, completing: Bool = false, now: Int64
    ) throws -> RecordStore {
        let directory = backend.location
        let (existing, placementPending, rotationPending, recordCount) = try backend.read { txn in
            let header = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { Array($0) } }
            // Counted only where there is no header: what a headerless store holds decides whether it may be completed.
            let records = header != nil ? 0 : try KeySpace.allCases.reduce(0) { $0 + (try txn.count(in: $1)) }
            return (
                header, try Self.loneTokenPlacement.isPending(in: txn),
                try Self.dataKeyRotation.isPending(in: txn), records
            )
        }

        let keyring: Keyring
        let root: SecureKey
        var readOnly = options.readOnly
        if existing == nil, recordCount > 0 {
            // Records without the header that holds their keys: completing it would seal new records under a new key
            // beside ones no key opens. This is damage, for a backup or quarantine, not an interrupted creation.
            throw TokenCacheError(
                .corruptStore,
                "the store at \(directory) holds \(recordCount) record\(recordCount == 1 ? "" : "s") but no header (the data keys "
                    + "that open them): it is damaged or not a token-cache store, and no key opens its records. Restore it from a backup; "
                    + "`cachetool quarantine --force` moves it aside and creates an empty store"
            )
        }
        switch (existing, newRoot) {
        case (nil, nil):
            // Only an interrupted creation leaves an empty store without a header: an older build's, which made the
            // directory before it had the key, or one killed between the environment's open and the header's commit.
            // No store was ever there: `create` completes it.
            throw TokenCacheError(
                .storeNotFound,
                "no token cache at \(directory): its creation was interrupted before it had a key (the directory holds an empty, "
                    + "unkeyed data file); `cachetool init` completes it"
            )
        case (.some, .some):
            throw TokenCacheError(.storeAlreadyExists, "a token cache already exists at \(directory)")
        case (nil, .some(let generated)):
            root = generated.root
            keyring = try Keyring.create(
                rootKind: generated.kind, root: generated.root, salt: generated.salt, cost: generated.cost,
                cipher: options.cipher ?? automaticCipher(for: backend), now: now
            )
            let bytes = keyring.header.encoded()
            try backend.write { txn in
                if try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey, { _ in true }) != nil {
                    throw TokenCacheError(.storeAlreadyExists, "a token cache was created at \(directory) concurrently")
                }
                try bytes.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            }
        case (.some(let bytes), nil):
            try options.rootKey.checkAvailable(forStoreAt: directory)
            let header: StoreHeader
            do {
                header = try StoreHeader.decode(bytes)
            } catch .unsupportedVersion(let read, let write) {
                throw TokenCacheError(
                    .unsupportedFormatVersion,
                    "the store at \(directory) has format read version \(read) (write version \(write)); "
                        + "this library reads version \(FormatConstants.readVersion). Upgrade token-cache"
                )
            } catch .malformed(let reason) {
                throw TokenCacheError(.corruptStore, "the store header at \(directory) is invalid: \(reason)")
            }
            if header.writeVersion > FormatConstants.writeVersion { readOnly = true }
            // Before the key: a machine that cannot run a cipher the store names says so, whatever key it was given.
            if let cipher = header.unavailableCipher {
                throw unavailable(cipher, "the store at \(directory) is sealed with it", advice: true)
            }
            let derived = try options.rootKey.rootKey(for: header)
            root = derived
            let unlocked = try Keyring.unlock(header: header, root: derived)
            if header.readVersion < FormatConstants.readVersion, !readOnly {
                // A store several hosts share is converted only when asked: some of them may not run AES-256-GCM.
                let cipher = options.cipher ?? (isServerStore(backend) ? unlocked.activeCipher : automaticCipher(for: backend))
                if !cipher.isAvailable { throw unavailable(cipher, "cannot convert the store at \(directory) to it") }
                // A store of files has its records re-encoded in body schema 2 at once (smaller: its pages hold more
                // records); a shared one only as its records are rewritten, unless converted to another cipher.
                let reseals = header.readVersion < 4 && !isServerStore(backend)
                try upgrade(bytes, backend: backend, keyring: unlocked, root: derived, cipher: cipher, reseals: reseals, now: now)
                return try open(backend, options: options, newRoot: nil, now: now)
            }
            keyring = unlocked
        }
        let store = RecordStore(
            backend: backend, keyring: keyring, root: root, readOnly: readOnly, aliases: options.aliases,
            completedInterruptedCreation: completing && existing == nil
        )
        if placementPending, !readOnly { try store.finishLoneTokenPlacement() }
        // Best effort: the store is valid however far the walk gets, and any writable open (or `rotateDataKey`)
        // continues it; another process changing the header meanwhile, or a full map, does not fail this open.
        if rotationPending, !readOnly, options.finishesRotation { _ = try? store.continueRotation(root: root) }
        return store
    }

    /// The cipher a store is created with when none is configured: the faster one this machine runs for a store of
    /// files (or memory), which one machine uses; XChaCha20-Poly1305 for a store on a database server, which hosts of
    /// other processors may share (and where the cipher's cost is a few microseconds against a round trip's hundreds).
    static func automaticCipher(for backend: any RecordBackend) -> RecordCipher {
        isServerStore(backend) ? .xchacha20Poly1305 : .preferred
    }

    /// Whether the records are on a database server that several hosts share.
    private static func isServerStore(_ backend: any RecordBackend) -> Bool { backend is any RevisionFloorKeeping }

    /// The error for a cipher this machine cannot run: `.unsupportedEnvironment`, never a wrong key or damage.
    static func unavailable(_ cipher: RecordCipher, _ what: String, advice: Bool = false) -> TokenCacheError {
        TokenCacheError(
            .unsupportedEnvironment,
            "\(cipher): \(what), and this machine cannot run it (libsodium's AES-256-GCM needs an x86-64 processor with AES-NI "
                + "and PCLMULQDQ)"
                + (advice ? "; open it on a machine that can, and convert it there with `cachetool rekey --rotate-data-key --cipher xchacha20-poly1305`" : "")
        )
    }

    /// Upgrades a store of an older format version to this one (FORMAT.md §7), in one write transaction: the
    /// header's versions (which every wrapped data key authenticates, so the keys are re-sealed; their cipher, which
    /// version 3 names, is XChaCha20-Poly1305's); from version 1, the placement cursor that has lone access tokens
    /// moved under their bucket prefix (§4.3) afterwards (``finishLoneTokenPlacement()``); and, when `cipher` is
    /// another or `reseals` (from version 3 or older: bodies of schema 1), a new data key sealing with `cipher` and a
    /// rotation's cursor (§6.5), so that the records are re-sealed afterwards (``continueRotation(root:progress:)``),
    /// their bodies in schema 2. Both run in transactions of bounded size, resumed by any
    /// writable open. Does nothing if another process changed the header meanwhile (it upgraded the store first); the
    /// caller opens the store again as it now is.
    private static func upgrade(
        _ storedHeader: [UInt8], backend: any RecordBackend, keyring: Keyring, root: SecureKey, cipher: RecordCipher, reseals: Bool,
        now: Int64
    ) throws {
        var target = keyring.header
        let placesLoneTokens = target.readVersion < 2
        target.readVersion = FormatConstants.readVersion
        target.writeVersion = FormatConstants.writeVersion
        let rotates = (cipher != keyring.activeCipher || reseals) && keyring.keyIDs.count < FormatConstants.maximumDataKeys
        let header = try (
            rotates
                ? keyring.addingDataKey(createdAt: now, cipher: cipher, root: root, header: target).header
                : keyring.rewrapped(as: target, root: root)
        ).encoded()
        try backend.write { txn in
            let current = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { Array($0) } }
            guard current == storedHeader else { return }
            try header.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
            if placesLoneTokens { try loneTokenPlacement.begin(in: txn) }
            if rotates { try dataKeyRotation.begin(in: txn) }
        }
    }

    /// Refuses to write when the stored header is no longer the one this store was opened with: another process
    /// upgraded the store to a newer format (whose rules this code does not know) or changed its keys (FORMAT.md §7).
    /// One get from the tiny `meta` database per write transaction.
    package func checkHeaderUnchanged(in txn: any RecordReading) throws {
        let stored = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { Array($0) } }
        guard stored != sealing.withLock({ $0.bytes }) else { return }
        // A newer read version is what the header parser refuses, reading nothing after it (§7).
        var header: StoreHeader? = nil
        do {
            if let stored { header = try StoreHeader.decode(stored) }
        } catch .unsupportedVersion(let readVersion, _) {
            throw TokenCacheError(
                .unsupportedFormatVersion,
                "the store at \(directory) was upgraded to format version \(readVersion) by another process while "
                    + "open here; nothing was written (reopen it with a token-cache that reads that version)"
            )
        } catch {}  // malformed: reported as a changed header below
        if let header, let stored {
            // Another host converted the store to a cipher this one cannot run: nothing it writes could be read there.
            if let cipher = header.unavailableCipher {
                throw Self.unavailable(cipher, "another process converted the store at \(directory) to it while open here; nothing was written")
            }
            if adopt(header, bytes: stored) { return }
        }
        throw TokenCacheError(
            .conflict, "the header of the store at \(directory) changed since it was opened here; nothing was written (reopen the store)",
            currentRevision: nil
        )
    }

    /// Refuses to write unless the stored header is byte for byte the one this store was opened with. For writes that
    /// store a header built from this store's keyring (a rotation, a change of root key): following another process's
    /// header (as ``checkHeaderUnchanged(in:)`` does for ordinary writes) would write back a key list without the key it
    /// added, or under the root key it replaced.
    package func checkHeaderIsTheOpenedOne(in txn: any RecordReading) throws {
        let stored = try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { Array($0) } }
        guard stored != headerBytes else { return }
        throw TokenCacheError(
            .conflict,
            "the header of the store at \(directory) changed since it was opened here (another process rotated its data key, "
                + "changed its root key or upgraded it); nothing was written: open the store again and retry",
            currentRevision: nil
        )
    }

    /// Follows a header another handle stored, when this one can: a data-key rotation (this root key opens the new
    /// header, and its first key, which roots the blind index, is this store's) seals from now on under the new active
    /// key, whose record key is also learned for reading; a rekey (the same data keys wrapped under another root key,
    /// which this handle cannot open but need not: it holds them) goes on with the keys it has. So a long-running
    /// host of a shared store keeps writing through another host's rotation or rekey. Anything else (another store,
    /// other format versions, a key this handle does not hold) is not followed: the caller refuses the write.
    private func adopt(_ header: StoreHeader, bytes: [UInt8]) -> Bool {
        let opened = keyring.header
        guard header.storeID == opened.storeID, header.readVersion == opened.readVersion, header.writeVersion == opened.writeVersion,
            let firstID = header.wrappedKeys.map(\.keyID).min(), firstID == keyring.keyIDs.first
        else { return false }
        if let rotated = try? Keyring.unlock(header: header, root: root) {
            laterRecordKeys.withLock { learned in
                for id in rotated.keyIDs where keyring.recordKey(id) == nil { learned[id] = rotated.recordKey(id) }
            }
            sealing.withLock { $0 = SealingHeader(bytes: bytes, keyID: rotated.activeKeyID, recordKey: rotated.activeRecordKey) }
            return true
        }
        let ids = header.wrappedKeys.map(\.keyID)
        guard let active = ids.max(), ids.allSatisfy({ recordKey($0) != nil }), let activeKey = recordKey(active) else { return false }
        sealing.withLock { $0 = SealingHeader(bytes: bytes, keyID: active, recordKey: activeKey) }
        return true
    }

    /// Runs `body` on one consistent snapshot.
    package func read<R>(_ body: (CacheReader) throws -> R) throws -> R {
        do {
            return try readingCommitted { try backend.read { transaction in try body(CacheReader(store: self, transaction: transaction)) } }
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
    }

    /// Runs `body` in one write transaction, after checking that this store may write and that the header is still
    /// the one it was opened with. `now` is the time every record written is stamped with. `freeingSpace` marks a
    /// write that only removes records: it may use the room the backend keeps beyond its cap (``RecordBackend``),
    /// so that sign-out, delete and purge work on a full store. Errors as for ``read(_:)``.
    func write<R>(now: Int64, freeingSpace: Bool = false, _ body: (CacheWriter) throws -> R) throws -> R {
        try checkWritable()
        do {
            // Where the run that committed left the expiry sweep: a body re-runs when the map grows, and only the
            // last run counts; a body that throws commits nothing and moves nothing.
            var committedSweepCursor: (commit: Int, key: [UInt8])? = nil
            let result = try writingRecords { try backend.write(freeingSpace: freeingSpace) { transaction in
                try checkHeaderUnchanged(in: transaction)
                let writer = CacheWriter(store: self, transaction: transaction, now: now)
                let result = try body(writer)
                committedSweepCursor = writer.sweepCursor.map { (transaction.snapshotID, $0) }
                return result
            } }
            if let committedSweepCursor { publishSweepCursor(committedSweepCursor.key, committedIn: committedSweepCursor.commit) }
            return result
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
    }

    /// Runs `body`, a read of committed records, so that the revisions it opens raise this host's marks
    /// (``RevisionMarks``); on a store without marks, just runs it.
    package func readingCommitted<R>(_ body: () throws -> R) rethrows -> R {
        guard revisionMarks != nil else { return try body() }
        return try RevisionMarks.readingCommitted(body)
    }

    /// Runs `body`, a write transaction, so that the revisions it opens are checked against this host's marks
    /// without raising them (``RevisionMarks``); on a store without marks, just runs it.
    package func writingRecords<R>(_ body: () throws -> R) rethrows -> R {
        guard revisionMarks != nil else { return try body() }
        return try RevisionMarks.writing(body)
    }

    /// Hands the store the expiry sweep's cursor of a transaction that committed as `commit`, unless a later commit
    /// already moved it: writers finishing out of order never move it back.
    func publishSweepCursor(_ key: [UInt8], committedIn commit: Int) {
        sweepCursor.withLock { if commit > $0.commit { $0 = (commit, key) } }
    }

    package func checkWritable() throws(TokenCacheError) {
        if readOnly {
            throw TokenCacheError(.readOnly, "the store at \(directory) is open read-only (or was written by a newer format)")
        }
    }

    // MARK: Records

    package func slot(_ database: KeySpace, _ key: [UInt8]) -> RecordSlot {
        RecordSlot(storeID: keyring.storeID, database: database.name, key: key)
    }

    func corrupt(_ kind: EntityKind, _ database: KeySpace, _ key: [UInt8], _ reason: String) -> CorruptRecord {
        CorruptRecord(kind: kind, fingerprint: keyring.fingerprint(database: database.name, key: key), reason: reason)
    }

    /// The record key of data key `id`: from the keyring this store was opened with, else (a key added to the header
    /// since: a data-key rotation begun elsewhere) from the header as stored now, unwrapped with the root key. Only
    /// a record naming a key this handle does not know takes the second way; nil when the header has no such key.
    func recordKey(_ id: UInt32) -> RecordKey? {
        if let key = keyring.recordKey(id) { return key }
        return laterRecordKeys.withLock { learned -> RecordKey? in
            if let key = learned[id] { return key }
            // A read nested in whatever transaction met the record: it sees the newest committed header.
            guard let bytes = try? backend.read({ txn in try txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { Array($0) } } }),
                let header = try? StoreHeader.decode(bytes), header.storeID == keyring.storeID,
                let current = try? Keyring.unlock(header: header, root: root), let key = current.recordKey(id),
                // A record sealed with a cipher this machine cannot run is read as naming no key it holds; the next write
                // meets the header and says why (``checkHeaderUnchanged(in:)``).
                key.cipher.isAvailable
            else { return nil }
            learned[id] = key
            return key
        }
    }

    /// Authenticates and decrypts a record's body.
    func openBodyPlaintext(_ value: UnsafeRawBufferPointer, slot: RecordSlot) throws(FormatError) -> SecureBuffer {
        guard let plaintext = try RecordEnvelope.open(.body, of: value, slot: slot, keys: recordKey) else {
            throw FormatError("missing body")
        }
        return plaintext
    }

    /// Authenticates and decrypts a record's body into a temporary buffer, and lends it to `body` decoded: the
    /// field table is valid only inside `body`, and the plaintext is wiped when it returns. Reads copy what they
    /// keep (strings, ``Secret``s) straight out of it, with no intermediate heap plaintext.
    @inline(__always)
    func withBody<R>(
        _ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, database: KeySpace, _ body: (DecodedBody) throws(FormatError) -> R
    ) throws(FormatError) -> R {
        let opened = try RecordEnvelope.withOpened(
            .body, of: value, storeID: keyring.storeID, database: database.name, key: key, keys: recordKey
        ) { plaintext throws(FormatError) in
            let decoded = try DecodedBody(borrowing: plaintext)
            if let revisionMarks { try revisionMarks.check(decoded.revision, space: database, key: key) }
            return try body(decoded)
        }
        guard let opened else { throw FormatError("missing body") }
        return opened
    }

    /// The revision of a stored record: authenticated (and checked against this host's marks) like any read, but
    /// without decoding its fields.
    package func openRevision(_ value: UnsafeRawBufferPointer, in database: KeySpace, key: [UInt8]) throws(FormatError) -> UInt64 {
        let revision = try RecordBody.header(of: try openBodyPlaintext(value, slot: slot(database, key))).revision
        if let revisionMarks {
            try key.withUnsafeBytes { key in Result { () throws(FormatError) in try revisionMarks.check(revision, space: database, key: key) } }.get()
        }
        return revision
    }

    /// Decodes a stored value as an entity, or says why it cannot.
    package func decode<S: StorableEntity>(_ type: S.Type, value: UnsafeRawBufferPointer, key: [UInt8]) -> Result<StoredEntity<S>, CorruptRecord> {
        decode(S.self, value: value, key: key, fields: S.init(decoding:))
    }

    /// ``decode(_:value:key:)`` with the entity built by `make` from the (borrowed) field table.
    ///
    /// The stored entity is built inside the body's scope and returned from it as it is: a tuple of its parts taken
    /// apart afterwards would copy the entity (every string of an access token retained and released once more).
    func decode<S: StorableEntity>(
        _ type: S.Type, value: UnsafeRawBufferPointer, key: [UInt8], fields make: (FieldTable) throws(FormatError) -> S
    ) -> Result<StoredEntity<S>, CorruptRecord> {
        let database = KeySpace(S.kind)
        do {
            return .success(
                try key.withUnsafeBytes { keyBytes in
                    try withBody(value, key: keyBytes, database: database) { body throws(FormatError) in
                        StoredEntity(
                            entity: try make(body.fields), revision: body.revision, updatedAt: body.updatedAt,
                            record: RecordFingerprint(space: database.name, key: key, deriver: keyring)
                        )
                    }
                }
            )
        } catch {
            // `withUnsafeBytes` rethrows untyped; what it rethrows is the body's `FormatError`.
            return .failure(corrupt(S.kind, database, key, (error as? FormatError)?.message ?? "\(error)"))
        }
    }

    /// Seals `entity` as the value of `key` with the given revision, in place in the backend's reserved value.
    func seal<S: StorableEntity>(_ entity: S, key: [UInt8], revision: UInt64, now: Int64, into txn: any RecordWriting) throws {
        let (body, summary) = try Self.plaintexts(of: entity, revision: revision, now: now)
        try putSealed(summary: summary?.encodedSummary(), body: body.encode(), database: KeySpace(S.kind), key: key, into: txn)
    }

    /// The body and summary a record of `entity` holds, checked against the format's size limits (FORMAT.md §5.1):
    /// what `seal` writes, and what an import checks before it writes anything.
    package static func plaintexts<S: StorableEntity>(of entity: S, revision: UInt64, now: Int64) throws(TokenCacheError) -> (RecordBody, FieldMap?) {
        let body = RecordBody(revision: revision, updatedAt: now, fields: entity.encodeFields())
        guard body.encodedCount <= FormatConstants.maximumBodyPlaintext else {
            throw TokenCacheError(
                .recordTooLarge,
                "\(S.kind) record of \(body.encodedCount) bytes exceeds the \(FormatConstants.maximumBodyPlaintext)-byte limit"
            )
        }
        let summary = entity.summaryFields()
        if let summary, summary.summaryEncodedCount > FormatConstants.maximumSummaryPlaintext {
            throw TokenCacheError(.recordTooLarge, "\(S.kind) scopes exceed the \(FormatConstants.maximumSummaryPlaintext)-byte summary limit")
        }
        return (body, summary)
    }

    /// Seals the plaintexts under the active data key, with fresh nonces, as the record under `key`, written in place
    /// into the backend's reserved value: how a new record is stored and how a moved one is re-sealed for its new key.
    func putSealed(summary: SecureBuffer?, body: SecureBuffer, database: KeySpace, key: [UInt8], into txn: any RecordWriting) throws {
        let count = RecordEnvelope.sealedCount(summaryPlaintext: summary?.count, bodyPlaintext: body.count)
        try txn.put(in: database, key: key, reservingCount: count) { output in
            try seal(summary: summary, body: body, database: database, key: key, into: output)
        }
    }

    /// The value `seal(_:key:revision:now:into:)` stores for `entity` under `key`, as bytes: for a writer that seals
    /// records ahead of the transaction that stores them, on another thread (the benchmark population's bulk load).
    package func sealedValue<S: StorableEntity>(_ entity: S, key: [UInt8], revision: UInt64, now: Int64) throws -> [UInt8] {
        let (body, summary) = try Self.plaintexts(of: entity, revision: revision, now: now)
        let summaryPlaintext = summary?.encodedSummary(), bodyPlaintext = body.encode()
        let count = RecordEnvelope.sealedCount(summaryPlaintext: summaryPlaintext?.count, bodyPlaintext: bodyPlaintext.count)
        var value = [UInt8](repeating: 0, count: count)
        try value.withUnsafeMutableBytes { output in
            try seal(summary: summaryPlaintext, body: bodyPlaintext, database: KeySpace(S.kind), key: key, into: output)
        }
        return value
    }

    /// Seals the plaintexts under the active data key, with fresh nonces, as the record under `key` into `output`
    /// (exactly `RecordEnvelope.sealedCount` bytes).
    private func seal(
        summary: SecureBuffer?, body: SecureBuffer, database: KeySpace, key: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws {
        let slot = slot(database, key)
        let (keyID, recordKey) = sealing.withLock { ($0.keyID, $0.recordKey) }
        try body.withUnsafeBytes { body in
            if let summary {
                try summary.withUnsafeBytes { summary in
                    try RecordEnvelope.seal(summary: summary, body: body, slot: slot, keyID: keyID, key: recordKey, into: output)
                }
            } else {
                try RecordEnvelope.seal(summary: nil, body: body, slot: slot, keyID: keyID, key: recordKey, into: output)
            }
        }
    }
}
