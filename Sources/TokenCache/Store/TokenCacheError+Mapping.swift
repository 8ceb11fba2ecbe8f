internal import TokenCacheStorage
internal import TokenCacheSodium
internal import TokenCacheRecords

extension TokenCacheError {
    /// Maps whatever the layers below throw to the public error, naming the store: what makes ``TokenCacheError``
    /// the one error type the library throws. A `TokenCacheError` passes through unchanged; an error of a type no
    /// layer of the library throws on purpose becomes ``Code/internalError``, named by its type only (its text
    /// could hold anything).
    package static func wrap(_ error: any Error, directory: String) -> TokenCacheError {
        libraryError(error, directory: directory)
            ?? TokenCacheError(.internalError, "an unexpected \(type(of: error)) escaped the library (its text is not shown)")
    }

    /// ``wrap(_:directory:)`` for what a caller's closure passed to ``TokenStore/read(_:)`` or
    /// ``TokenStore/write(_:)`` throws: the library's own failures inside it are mapped, and an error of any other
    /// type is the caller's and comes back unchanged, so that the caller can catch its own error.
    package static func wrapKeepingCallerErrors(_ error: any Error, directory: String) -> any Error {
        libraryError(error, directory: directory) ?? error
    }

    /// The public error for an error of a type the library throws, nil for any other type.
    private static func libraryError(_ error: any Error, directory: String) -> TokenCacheError? {
        switch error {
        case let error as TokenCacheError: error
        case let error as StorageError: TokenCacheError(Code(error.code.rawValue), error.message)
        case let error as SodiumError: map(error)
        case let error as FormatError: map(error)
        case let error as KeyringError: map(error)
        case let error as CorruptRecord: TokenCacheError(.corruptRecord, error.description, recordFingerprint: error.fingerprint)
        default: nil
        }
    }

    /// libsodium failures that escaped the code meant to handle them (key loading maps its own failures to
    /// `wrongKey` and `keyUnavailable`; record opening reports authentication failures as damaged records).
    /// Messages name the operation and sizes, never key, plaintext or ciphertext bytes.
    private static func map(_ sodium: SodiumError) -> TokenCacheError {
        switch sodium.code {
        case .initializationFailed:
            // As ``TokenStore/open(_:)`` reports it: libsodium is unusable in this process.
            TokenCacheError(.unsupportedEnvironment, "libsodium cannot be used in this process (\(sodium))")
        case .unavailable:
            // The store opens check this first (a data key whose cipher this machine lacks); met later, it is the same.
            TokenCacheError(.unsupportedEnvironment, "this machine cannot run the store's cipher (\(sodium))")
        case .outOfMemory:
            // As key loading reports it (``SodiumCall``): the system refused memory, nothing is wrong with the data.
            TokenCacheError(.ioFailure, "out of memory for key material (\(sodium))")
        case .authenticationFailed:
            // Sealed bytes that do not authenticate are damage. Which record is not known here, so no fingerprint.
            TokenCacheError(.corruptRecord, "a sealed record did not authenticate (\(sodium))")
        case .invalidLength, .invalidParameters, .invalidEncoding:
            // Every length and parameter handed to libsodium is computed by the library (callers' input is
            // validated earlier, as `invalidArgument`): libsodium refusing one is a bug, not bad input.
            TokenCacheError(.internalError, "libsodium refused an operation (\(sodium))")
        }
    }

    /// A ``FormatError`` always means stored bytes that do not decode (the codec never raises it for what it is
    /// asked to encode), whether a read or a write met them: a damaged record. The store's readers turn it into
    /// `corruptRecord` with the record's fingerprint; one that escapes them reaches here, where the record is not
    /// known, so it has none.
    private static func map(_ format: FormatError) -> TokenCacheError {
        TokenCacheError(.corruptRecord, "a stored record does not decode: \(format.message)")
    }

    /// The keyring's failures: a root key that opens no data key is the caller's wrong key; memory refused is an
    /// I/O-class failure (as ``SodiumCall`` reports it for key loading); the rest are the library's own faults.
    private static func map(_ keyring: KeyringError) -> TokenCacheError {
        switch keyring.code {
        case .wrongKey: TokenCacheError(.wrongKey, keyring.message)
        case .outOfMemory: TokenCacheError(.ioFailure, keyring.message)
        case .cryptographicFailure, .unknownDataKey: TokenCacheError(.internalError, keyring.message)
        }
    }
}
