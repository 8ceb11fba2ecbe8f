import ArgumentParser
import Foundation
import TokenCache

/// `cachetool init`: create the key file (if the key comes from a file) and the store, or check that an
/// existing store opens with the configured key.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the key file and the store (or check that they open).",
        discussion: """
            With a key file, a missing key file is created with 32 random bytes, mode 0600. With \
            $TOKEN_CACHE_PASSPHRASE the store is protected by Argon2id instead. Running init again on an \
            existing store only checks that the key opens it: it never makes a key for a store that exists (a new key \
            cannot open it; restore the key file from a backup). A store whose creation was interrupted before it had \
            a key (an empty data file without a header) is completed.

            Records are sealed with AES-256-GCM where the processor has AES-NI and PCLMULQDQ, else with \
            XChaCha20-Poly1305; --cipher chooses. A store sealed with AES-256-GCM does not open on a machine without \
            them (exit 78): give xchacha20-poly1305 for a store that such machines share. `rekey --rotate-data-key \
            --cipher` converts a store later.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: "Argon2id cost for a passphrase-protected store: interactive, moderate or sensitive.")
    var passphraseCost: CostLevel = .interactive

    @Option(help: ArgumentHelp(
        "The cipher records are sealed with: aes-256-gcm (needs AES-NI) or xchacha20-poly1305 (runs everywhere). Default: $TOKEN_CACHE_CIPHER, else the faster one this machine runs.",
        valueName: "cipher"
    ))
    var cipher: CipherChoice?

    /// A ``StoreCipher`` by the name `cachetool` prints.
    enum CipherChoice: String, ExpressibleByArgument, CaseIterable {
        case aes256GCM = "aes-256-gcm"
        case xchacha20Poly1305 = "xchacha20-poly1305"
        var cipher: StoreCipher { StoreCipher(rawValue: rawValue)! }
    }

    enum CostLevel: String, ExpressibleByArgument, CaseIterable {
        case interactive, moderate, sensitive
        var cost: PassphraseCost {
            switch self {
            case .interactive: .interactive
            case .moderate: .moderate
            case .sensitive: .sensitive
            }
        }
    }

    func run() throws {
        try Failure.reporting {
            var configuration = options.configuration(readOnly: false)
            configuration.passphraseCost = passphraseCost.cost
            if let cipher { configuration.cipher = cipher.cipher }
            let raisesCeiling = passphraseCost == .sensitive && configuration.maximumPassphraseCost != .sensitive
            if raisesCeiling { configuration.maximumPassphraseCost = .sensitive }  // asked for explicitly, here
            // Checked before a key file is created: a wrong --store must leave nothing behind.
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: configuration.directory, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw ValidationError("--store: \(Terminal.sanitize(configuration.directory)) is a file, not a directory (a store is a directory); nothing was created")
            }
            // An existing store opens with its own key or not at all: a new key file is made only where there is no
            // store, so a missing key never turns into a second key that opens nothing.
            if let existing = try Self.openExisting(configuration) {
                let info = try existing.info()
                print("Store \(configuration.directory) already exists and opens with \(configuration.keySource).")
                print("Store id \(info.storeID), \(info.recordCounts.values.reduce(0, +)) records.")
                if let cipher, cipher.cipher != info.cipher {
                    print("It seals records with \(info.cipher), not \(cipher.rawValue): `cachetool rekey --rotate-data-key --cipher \(cipher.rawValue)` converts it.")
                }
                return
            }
            // Before a key file is made: a cipher this machine cannot run leaves nothing behind.
            if let cipher = configuration.cipher, !cipher.isAvailable {
                throw cipher.unavailable("cannot create a store sealed with it; nothing was created")
            }
            if case .keyFile(let path) = configuration.keySource, !FileManager.default.fileExists(atPath: path) {
                try KeyFile.create(at: path)
                print("Created key file \(path) (mode 0600). Keep a backup: without it the store cannot be read.")
            }
            let cache: TokenStore
            do {
                let created = try TokenStore.create(configuration)
                let verb = created.completedInterruptedCreation ? "Completed the store" : "Created store"
                let info = try created.info()
                print("\(verb) \(configuration.directory) (format v\(info.readVersion), \(info.cipher)), protected by \(configuration.keySource).")
                if created.completedInterruptedCreation {
                    print("Its creation had been interrupted before it had a key: it held no record, and now has its header.")
                }
                if raisesCeiling, case .passphrase = configuration.keySource {
                    print("Opening it needs \(Configuration.Variable.maximumPassphraseCost)=sensitive: by default an open spends at most the moderate cost.")
                }
                cache = created
            } catch let error as TokenCacheError where error.code == .storeAlreadyExists {
                cache = try TokenStore.open(configuration)
                print("Store \(configuration.directory) already exists and opens with \(configuration.keySource).")
            }
            let info = try cache.info()
            print("Store id \(info.storeID), \(info.recordCounts.values.reduce(0, +)) records.")
        }
    }

    /// The store the configuration names, opened, or nil where there is none (nothing there, or an empty one whose
    /// creation was interrupted). Every other failure — a missing or wrong key for a store that exists — is thrown.
    private static func openExisting(_ configuration: Configuration) throws -> TokenStore? {
        do { return try TokenStore.open(configuration) } catch let error as TokenCacheError where error.code == .storeNotFound { return nil }
    }
}
