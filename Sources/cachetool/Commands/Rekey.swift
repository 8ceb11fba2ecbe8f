import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool rekey`: protect the store with a new key file or passphrase.
struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Protect the store with a new key file or passphrase, or seal its records under a new data key.",
        discussion: """
            The store is opened with its current key (--key-file, $TOKEN_CACHE_KEY, $TOKEN_CACHE_PASSPHRASE, ...); its \
            data keys are then sealed under the new root key in one transaction. No record is rewritten, so this \
            takes milliseconds whatever the size of the store. A crash leaves the store opening with the old key or \
            the new one, never neither. With the wrong current key nothing is written (exit 77).

            --new-key-file names the new key file: created (32 random bytes, mode 0600) when missing, and never the \
            current key file. With --new-passphrase the new passphrase is read from $TOKEN_CACHE_NEW_PASSPHRASE. \
            Programs that have the store open keep reading; they write again once reopened with the new key.

            --rotate-data-key keeps the root key and seals every record under a new data key instead (for a data key \
            that may have leaked, or as routine): one transaction adds the key, then records are re-sealed about a \
            thousand per transaction, the store readable throughout; the last transaction retires the older data \
            keys (the first one stays: the blind index derives from it, though no record is sealed under it any \
            more). A rotation that is stopped or killed loses nothing; run the command again to finish it. \
            Programs that have the store open keep reading, and write again once reopened after the rotation. \
            `cachetool verify` shows which data keys records use.

            With --cipher the new data key seals with another cipher: how a store moves between aes-256-gcm and \
            xchacha20-poly1305 (before machines without AES-NI share it, say). Any writable open finishes a rotation \
            that was stopped.

            JSON keys: directory, protection, key_file; with --rotate-data-key: active_key_id, cipher, resumed, \
            resealed, damaged, retired_key_ids, transactions.

            Exit codes: 0 done, 64 usage, 65 damaged store, 66 store or key not found, 74 storage full or I/O \
            error (what committed stays), 75 another process changed the header meanwhile (run it again), 77 wrong \
            key or permissions, 78 a cipher this machine cannot run.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: ArgumentHelp("The new key file (created if missing).", valueName: "path"))
    var newKeyFile: String?

    @Flag(help: "Protect the store with the passphrase in $TOKEN_CACHE_NEW_PASSPHRASE (Argon2id).")
    var newPassphrase = false

    @Flag(help: "Keep the root key; seal every record under a new data key and retire the old ones.")
    var rotateDataKey = false

    @Option(help: ArgumentHelp(
        "With --rotate-data-key: the cipher the new data key seals with, aes-256-gcm or xchacha20-poly1305 (default: the store's).",
        valueName: "cipher"
    ))
    var cipher: Init.CipherChoice?

    @Option(help: "Argon2id cost for --new-passphrase: interactive, moderate or sensitive.")
    var passphraseCost: Init.CostLevel = .interactive

    @Flag(help: "Print JSON.")
    var json = false

    static let newPassphraseVariable = "TOKEN_CACHE_NEW_PASSPHRASE"

    func validate() throws {
        try Arguments.requireNonEmpty(newKeyFile, "--new-key-file")
        guard [newKeyFile != nil, newPassphrase, rotateDataKey].filter({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --new-key-file, --new-passphrase and --rotate-data-key")
        }
        if cipher != nil, !rotateDataKey { throw ValidationError("--cipher goes with --rotate-data-key") }
    }

    func run() throws {
        let newPassphraseText = ProcessInfo.processInfo.environment[Self.newPassphraseVariable]
        unsetenv(Self.newPassphraseVariable)
        try Failure.reporting {
            var configuration = options.configuration(readOnly: false)
            let source: KeySource
            if rotateDataKey {
                // A rotation left under way is this command's to finish and report, not the open's; a store of an older
                // format that the open upgrades is converted to the cipher asked for, if any.
                configuration.finishesRotation = false
                if let cipher { configuration.cipher = cipher.cipher }
                try rotate(try TokenStore.open(configuration))
            } else if let newKeyFile {
                if case .keyFile(let current) = configuration.keySource, Self.sameFile(current, newKeyFile) {
                    throw ValidationError("--new-key-file: \(Terminal.sanitize(newKeyFile)) is the current key file; name a new one")
                }
                // Opened first: the wrong current key must leave nothing behind, not even a new key file.
                let cache = try TokenStore.open(configuration)
                if !FileManager.default.fileExists(atPath: newKeyFile) { try KeyFile.create(at: newKeyFile) }
                source = .keyFile(path: newKeyFile)
                try rekey(cache, to: source)
            } else {
                guard let text = newPassphraseText, !text.isEmpty else {
                    throw ValidationError("--new-passphrase: set $\(Self.newPassphraseVariable) to the new passphrase")
                }
                let cache = try TokenStore.open(configuration)
                source = .passphrase(Secret(text), origin: "$\(Self.newPassphraseVariable)")
                try rekey(cache, to: source)
            }
        }
    }

    private func rekey(_ cache: TokenStore, to source: KeySource) throws {
        try cache.changeRootKey(to: source, passphraseCost: passphraseCost.cost)
        let protection: String
        switch source {
        case .passphrase: protection = "passphrase"
        default: protection = "key"
        }
        if json {
            var object: [String: JSONValue] = ["directory": .string(cache.configuration.directory), "protection": .string(protection)]
            if let newKeyFile { object["key_file"] = .string(newKeyFile) }
            print(JSONValue.object(object).prettyPrinted())
        } else {
            print(Terminal.sanitize("The store \(cache.configuration.directory) is now protected by \(source); the old key no longer opens it."))
            if let newKeyFile { print(Terminal.sanitize("Point programs at the new key file (--key-file \(newKeyFile) or $TOKEN_CACHE_KEY_FILE), and keep a backup of it.")) }
        }
    }

    private func rotate(_ cache: TokenStore) throws {
        let records = try cache.info().recordCounts.values.reduce(0, +)
        let bar = ProgressBar(label: "re-sealing", unit: "records", delay: 1.0)
        let report = try cache.rotateDataKey(to: cipher?.cipher) { bar?.update(done: $0.resealed + $0.damaged, total: records) }
        bar?.finish()
        if json {
            print(JSONValue.object([
                "directory": .string(cache.configuration.directory), "active_key_id": .integer(Int64(report.activeKeyID)),
                "cipher": .string(report.cipher.rawValue),
                "resumed": .bool(report.resumed), "resealed": .integer(Int64(report.resealed)), "damaged": .integer(Int64(report.damaged)),
                "retired_key_ids": .array(report.retiredKeyIDs.map { .integer(Int64($0)) }), "transactions": .integer(Int64(report.transactions)),
            ]).prettyPrinted())
            return
        }
        let retired = report.retiredKeyIDs.isEmpty ? "" : "; retired data key\(report.retiredKeyIDs.count == 1 ? "" : "s") "
            + report.retiredKeyIDs.map(String.init).joined(separator: ", ")
        print(Terminal.sanitize(
            "\(report.resumed ? "Finished the rotation" : "Rotated") to data key \(report.activeKeyID) (\(report.cipher)): re-sealed "
                + "\(InspectTable.plural(report.resealed, "record")) in \(InspectTable.plural(report.transactions, "transaction"))\(retired)."
        ))
        if report.damaged > 0 {
            print("\(InspectTable.plural(report.damaged, "damaged record")) could not be re-sealed: `cachetool verify --repair` removes them.")
        }
    }

    /// Whether two paths name one file (both existing and the same inode), or are the same path.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var first = stat(), second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}
