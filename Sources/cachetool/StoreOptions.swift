import ArgumentParser
import Foundation
import TokenCache
import TokenCachePostgreSQL

#if canImport(Glibc)
import Glibc
#endif

/// Options every store command shares: where the store is and where its key comes from.
struct StoreOptions: ParsableArguments {
    /// A directory, or a shared store's `postgresql://` URL (README, "A shared store on PostgreSQL").
    @Option(name: .customLong("store"), help: ArgumentHelp("Store directory.", valueName: "dir"))
    var store: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("Key file (32 bytes, mode 0600).", valueName: "path"))
    var keyFile: String?

    /// A store is a directory or a shared store's PostgreSQL URL; any other URL, or a PostgreSQL URL that is not
    /// usable, is refused before anything is created (``StoreLocation``). Empty
    /// paths, and a `TOKEN_CACHE_LOCK_TIMEOUT` that is not a duration, are usage errors too.
    func validate() throws {
        try Arguments.requireNonEmpty(store, "--store")
        try Arguments.requireNonEmpty(keyFile, "--key-file")
        if let cipher = ProcessInfo.processInfo.environment[Configuration.Variable.cipher], Configuration.cipher(parsing: cipher) == nil {
            throw ValidationError(
                "\(Configuration.Variable.cipher)=\(Terminal.sanitize(cipher)) is not a cipher: aes-256-gcm or xchacha20-poly1305"
            )
        }
        if let timeout = ProcessInfo.processInfo.environment[Configuration.Variable.lockTimeout],
            Configuration.lockTimeout(parsing: timeout) == nil
        {
            throw ValidationError(
                "\(Configuration.Variable.lockTimeout)=\(Terminal.sanitize(timeout)) is not a duration between 1 ms and a day "
                    + "(for example 30, 30s, 500ms or 2m)"
            )
        }
        if let store {
            try StoreLocation.check(store, from: "--store")
        } else if let directory = ProcessInfo.processInfo.environment[Configuration.Variable.directory] {
            try StoreLocation.check(directory, from: Configuration.Variable.directory)
        }
    }

    /// Resolves the configuration, and removes secret-bearing variables from this process's environment
    /// once read, so that child processes do not inherit them.
    ///
    /// Commands that only look open the store `readOnly`: they never create a missing database, upgrade an older
    /// format or finish an interrupted upgrade just to read.
    func configuration(readOnly: Bool) -> Configuration {
        let environment = ProcessInfo.processInfo.environment
        var configuration = Configuration.fromEnvironment(environment)
        // A shared store's URL (validated already) chooses the PostgreSQL backend; a directory, LMDB.
        if let location = store ?? environment[Configuration.Variable.directory], Configuration.isSharedStoreURL(location),
            let shared = try? Configuration.forLocation(location, environment: environment)
        {
            configuration = shared
        } else if let store {
            configuration.directory = store
        }
        configuration.readOnly = readOnly
        if let keyFile { configuration.keySource = .keyFile(path: keyFile) }
        unsetenv(Configuration.Variable.base64Key)
        unsetenv(Configuration.Variable.passphrase)
        return configuration
    }
}

/// Maps library errors to messages on stderr and stable exit codes.
enum Failure {
    static func exitCode(for error: TokenCacheError) -> Int32 {
        switch error.code {
        case .corruptRecord, .corruptStore, .invalidArgument, .recordTooLarge: 65
        case .storeNotFound, .keyUnavailable: 66
        case .conflict, .readersExhausted, .staleLockTable, .storeInUse, .lockTimeout: 75
        case .wrongKey, .insecurePermissions, .readOnly: 77
        case .unsupportedEnvironment, .unsupportedFormatVersion: 78
        case .storageFull, .ioFailure: 74
        case .storeUnavailable: 69
        default: 1
        }
    }

    /// Runs `body`; a `TokenCacheError` becomes `cachetool: <message>` on stderr and its exit code.
    static func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as TokenCacheError {
            Output.error(error.description)
            if error.code == .corruptStore {
                Output.note(
                    "`cachetool verify` says what is damaged; if the store cannot be used at all, `cachetool quarantine` moves it "
                        + "aside (kept, as STORE.corrupt-TIMESTAMP) and creates an empty one"
                )
            }
            throw ExitCode(exitCode(for: error))
        }
    }
}

enum Output {
    static func error(_ message: String) {
        line("cachetool: " + message)
    }

    /// Information about the command's result that is not its output (which goes to standard output).
    static func note(_ message: String) {
        line("cachetool: " + message)
    }

    static func warning(_ message: String) {
        line("cachetool: warning: " + message)
    }

    /// One line on standard error, escaped for the terminal.
    private static func line(_ text: String) {
        FileHandle.standardError.write(Data((Terminal.sanitize(text) + "\n").utf8))
    }
}
