import TokenCacheStorage

/// What the server's errors (by SQLSTATE, PostgreSQL's stable error codes) mean to the store. Messages carry the
/// server's primary message only, never its detail, which may quote a row's values.
enum PostgreSQLFailure {
    /// Serialisation failures and deadlocks: another transaction won; running again decides again.
    static let retryableStates: Set<String> = ["40001", "40P01"]

    static func isRetryable(_ error: any Error) -> Bool {
        (error as? RetryableConflict) != nil
    }

    /// Thrown for a serialisation failure, so that the transaction's driver runs it again.
    struct RetryableConflict: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static func map(sqlState state: String, message: String, at place: String, doing what: String) -> any Error {
        let text = "the PostgreSQL server at \(place) refused \(what): \(message) (SQLSTATE \(state))"
        if retryableStates.contains(state) { return RetryableConflict(message: text) }
        switch state {
        case "3D000", "3F000", "42P01", "42883":
            // No such database, schema, table or function: no store here (or one of a schema this version lacks).
            return StorageError(.storeNotFound, "no store at \(place): \(message); create it with cachetool init --store …")
        case "25006": return StorageError(.readOnly, "\(text); a shared store needs the primary, not a standby")
        case "53100": return StorageError(.storageFull, text)
        case "53300", "57P01", "57P02", "57P03", "57014", "55P03", "08000", "08003", "08006", "08001", "08004":
            // Too many connections, shutdown, statement timeout, lock timeout, connection failures.
            return StorageError(.storeUnavailable, text)
        case "28000", "28P01": return StorageError(.storeUnavailable, "\(text); check the user and its password")
        default: return StorageError(.ioFailure, text)
        }
    }
}
