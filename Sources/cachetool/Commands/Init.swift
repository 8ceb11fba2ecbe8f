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
            existing store only checks that the key opens it.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: "Argon2id cost for a passphrase-protected store: interactive, moderate or sensitive.")
    var passphraseCost: CostLevel = .interactive

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
            let raisesCeiling = passphraseCost == .sensitive && configuration.maximumPassphraseCost != .sensitive
            if raisesCeiling { configuration.maximumPassphraseCost = .sensitive }  // asked for explicitly, here
            // Checked before a key file is created: a wrong --store must leave nothing behind.
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: configuration.directory, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw ValidationError("--store: \(Terminal.sanitize(configuration.directory)) is a file, not a directory (a store is a directory); nothing was created")
            }
            if case .keyFile(let path) = configuration.keySource, !FileManager.default.fileExists(atPath: path) {
                try KeyFile.create(at: path)
                print("Created key file \(path) (mode 0600). Keep a backup: without it the store cannot be read.")
            }
            let cache: TokenStore
            do {
                let created = try TokenStore.create(configuration)
                print("Created store \(configuration.directory) (format v\(try created.info().readVersion)), protected by \(configuration.keySource).")
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
}
