public import TokenCache
extension TokenStore {
    /// Imports an MSAL serialized cache (the JSON file MSAL Python, .NET, Go, Node and ObjC write: Azure CLI's
    /// `msal_token_cache.json`, msal-extensions' files) into this store.
    ///
    /// Every SDK's spelling is accepted (timestamps as strings or numbers, `kid`/`keyid` for `key_id`, array
    /// targets of old Python caches, app tokens without an account, mixed-case names, a BOM), and identity is
    /// rebuilt from each entry's fields, never from its key string. Unknown fields stay with their entity; unknown
    /// top-level sections are kept (sealed) and written back by ``exportMSAL(options:to:)``.
    ///
    /// **All or nothing.** The whole file is checked before anything is written; one invalid entry (a missing or
    /// mistyped field, a bad timestamp, a scope the store refuses, a record too large for the format) or an unknown
    /// section the store cannot keep fails the import with an error naming its section, byte offset, field and
    /// reason, and the store is unchanged. So does an entry key repeated within a section (MSAL reads only the last
    /// of them): with ``MSALImportOptions/skipInvalid`` the earlier entries are rejected and the last imported. A
    /// file of more than ``MSALImportOptions/maximumEntries`` entries is refused. A file that changes between the check and the writing is refused
    /// (`.conflict`); one that is not a regular file (a pipe) is read into memory once. With
    /// ``MSALImportOptions/skipInvalid`` the valid entries are imported and the others reported.
    ///
    /// **Merging** (``MSALImportOptions/Mode/merge``): for each identity the record written later wins (`cached_at`,
    /// for refresh tokens `last_modification_time`, for ID tokens the JWT's `iat`; then `expires_on`; else the one
    /// met first stays: the stored one, so importing a file twice changes nothing, and of one file's entries the
    /// earlier, counted in ``MSALImportReport/mergedInFile``; a refresh or ID token with neither time replaces a
    /// stored one without times when its secret differs, so that a rotated token from an SDK that writes no times
    /// can be imported). An imported access token also replaces the stored tokens of its bucket whose
    /// scopes intersect its own, as an ingest does, unless one of them is newer, in which case it is not imported.
    /// Expired tokens are imported as they are (an import is no place to drop data by the clock). Entries are
    /// written in durable transactions of ``MSALImportOptions/batchSize`` (at most
    /// ``MSALImportOptions/maximumEntriesPerTransaction``); an import interrupted after the check keeps the batches
    /// committed, and running it again completes it.
    ///
    /// **Replacing** (``MSALImportOptions/Mode/replace``): the store's records become exactly the file's, in one
    /// transaction, for a file of at most ``MSALImportOptions/maximumReplaceEntries`` entries; the revisions of
    /// records the file has again continue.
    ///
    /// - Parameter progress: called after the check and after each committed batch (once, at the end, when
    ///   replacing), never inside a transaction.
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a file that cannot be read or is not an MSAL cache,
    ///   or for an invalid entry; the errors of ``write(_:)``.
    @discardableResult
    public func importMSAL(
        from source: MSALCacheSource, options: MSALImportOptions = MSALImportOptions(),
        progress: ((MSALImportProgress) -> Void)? = nil
    ) throws -> MSALImportReport {
        do {
            return try MSALImport(store: self, source: source, options: options).run(progress: progress)
        } catch {
            throw TokenCacheError.wrap(error, directory: store.directory)
        }
    }

    /// Reads an MSAL serialized cache again after ``importMSAL(from:options:progress:)`` and checks that the store
    /// holds every entry, as it is or superseded by a record the import rule prefers (see
    /// ``MSALImportVerification`` for exactly what counts), and every unknown section: what a caller checks before
    /// deleting the file the cache came from. One read transaction, one streaming pass over the file; nothing is
    /// written.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a file that cannot be read or is not an MSAL cache;
    ///   the errors of ``read(_:)``.
    public func verifyMSALImport(from source: MSALCacheSource) throws -> MSALImportVerification {
        do {
            return try MSALImportReadBack(store: self, source: source).run()
        } catch {
            throw TokenCacheError.wrap(error, directory: store.directory)
        }
    }

    /// Writes the store's records as an MSAL serialized cache, one snapshot, to `sink` in pieces: the unified JSON
    /// that MSAL Python, .NET, Go and Node read (integer-string timestamps, lower-case entry keys of every
    /// component, `key_id` for bound tokens), with the unknown fields and (for a whole-cache export) the unknown
    /// sections an import kept. Sections, entries and fields are sorted, so the same content always gives the same
    /// bytes. Damaged records are left out and reported. One read transaction: memory holds the records' keys, and
    /// each record is decoded when it is written.
    ///
    /// Without ``MSALExportOptions/includeSecrets`` every secret is ``Secret/redactionMarker``.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` when two records would get the same MSAL entry key (bound
    ///   tokens that share a key get their token type and key id appended, so only records differing in nothing MSAL
    ///   keys on could); `.corruptRecord` for a record that decoded when listed and not when written; the errors
    ///   `sink` throws, unchanged (nothing more is written then); the errors of ``read(_:)``.
    @discardableResult
    public func exportMSAL(options: MSALExportOptions = MSALExportOptions(), to sink: ([UInt8]) throws -> Void) throws -> MSALExportReport {
        try read { reader in
            let source = StoreExportSource(reader, options: options)
            do {
                try MSALCacheWriter.write(from: source, revealSecrets: options.includeSecrets, to: sink)
            } catch let error as MSALCacheWriter.ExportError {
                // Not the entry key in the message: it is made of account identifiers.
                throw TokenCacheError(.invalidArgument, "MSAL cache export, section \(error.section): \(error.reason)")
            }
            return source.report
        }
    }

    /// ``exportMSAL(options:to:)`` into one byte array.
    public func exportMSAL(options: MSALExportOptions = MSALExportOptions()) throws -> (document: [UInt8], report: MSALExportReport) {
        var document: [UInt8] = []
        let report = try exportMSAL(options: options) { document += $0 }
        return (document, report)
    }
}
