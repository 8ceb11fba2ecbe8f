/// Why a backend failed, for the store to report as its public error.
///
/// The codes are a subset of the library's public error codes, by the same names: the store maps each to the public
/// code of that name, keeping the message. Messages name the store's location and the failure, never a key or a
/// value (values are sealed; keys are blind-index digests).
package struct StorageError: Error, Sendable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case storeNotFound, readOnly, insecurePermissions, unsupportedEnvironment, unsupportedFormatVersion
        case corruptStore, storageFull, staleLockTable, readersExhausted, ioFailure, invalidArgument, storeInUse, lockTimeout
        /// A store on a server that did not answer within its deadline, or refused the connection: nothing was changed
        /// that the caller was told of.
        case storeUnavailable
        /// Concurrent writers kept colliding on the same records past the bound of retries: nothing was written.
        case conflict
        /// A read or write the domain should never have asked for (a bug, not bad input): a read outside a fetched plan.
        case internalError
    }

    package let code: Code
    package let message: String
    /// For an `.internalError` thrown by a read outside a fetched plan: what was asked for.
    package var missedPlan: PlanMiss? = nil

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
}
