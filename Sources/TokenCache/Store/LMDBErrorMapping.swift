internal import TokenCacheLMDB

extension TokenCacheError {
    /// Maps a wrapper error to the public error, naming the store. Errors that are already
    /// `TokenCacheError`s (thrown by a transaction body) pass through unchanged.
    static func wrap(_ error: any Error, directory: String) -> any Error {
        guard let lmdb = error as? LMDBError else { return error }
        switch lmdb {
        case .mapFull, .noSpace, .txnFull:
            return TokenCacheError(
                .storageFull,
                "the store at \(directory) is full (\(lmdb)); raise the maximum map size or free disk space. Nothing was written"
            )
        case .staleLockTable:
            return TokenCacheError(
                .staleLockTable,
                "nothing was written to \(directory): LMDB's lock table lags the newest commit (a process was killed "
                    + "while opening the store, or a tool opened it without token-cache's open lock), and writing now "
                    + "would overwrite that commit. Close every process using the store, then retry"
            )
        case .readersFull:
            return TokenCacheError(.readersExhausted, "too many concurrent readers of \(directory) (\(lmdb))")
        // MDB_BAD_TXN: the wrapper never reuses a failed transaction, so it means LMDB failed an internal read
        // earlier in this one without reporting it (refreshing a database's record whose root page number is
        // damaged does that) and refuses to go on: damage, not an I/O error.
        case .invalid, .corrupted, .truncatedDataFile, .pageNotFound, .panic, .badTxn:
            return TokenCacheError(
                .corruptStore,
                "the LMDB environment at \(directory) is damaged or not an LMDB file (\(lmdb)); "
                    + "move it aside and restore from a backup or re-create it with `cachetool init`"
            )
        case .versionMismatch:
            return TokenCacheError(.unsupportedFormatVersion, "the LMDB file at \(directory) was written by an incompatible LMDB (\(lmdb))")
        case .accessDenied, .readOnlyFilesystem:
            return TokenCacheError(
                .insecurePermissions,
                "permission denied for \(directory) (\(lmdb)); LMDB readers need write access to lock.mdb"
            )
        case .usedAfterFork, .nestedWrite, .unsupportedLibraryVersion:
            return TokenCacheError(.unsupportedEnvironment, "\(lmdb)")
        default:
            return TokenCacheError(.ioFailure, "LMDB failed on \(directory): \(lmdb)")
        }
    }
}
