package import TokenCacheStorage
import Foundation
internal import TokenCacheSodium

/// Where a store lives, how its key is obtained, and its limits.
public struct Configuration: Sendable {
    /// The store directory (LMDB's `data.mdb` and `lock.mdb`), mode 0700.
    public var directory: String
    /// How the store's root key is obtained (key file, passphrase or base64 key).
    public var keySource: KeySource
    /// Argon2id cost for a store created from a passphrase.
    public var passphraseCost: PassphraseCost = .interactive
    /// The costliest Argon2id parameters an open accepts from a store header (and a create from ``passphraseCost``).
    /// The header is not authenticated before the key is derived, so whoever can write the store could otherwise make
    /// every open spend up to 1 GiB and seconds of CPU. Default ``PassphraseCost/moderate`` (256 MiB, about 0.7 s);
    /// stores created as ``PassphraseCost/sensitive`` need it raised (`TOKEN_CACHE_MAX_PASSPHRASE_COST=sensitive`).
    /// Never above ``PassphraseCost/sensitive``.
    public var maximumPassphraseCost: PassphraseCost = .moderate
    /// The LMDB map size a new environment starts with.
    public var initialMapSize: Int = 32 << 20
    /// The map grows by doubling up to this size; beyond it writes fail with `.storageFull`.
    public var maximumMapSize: Int = 8 << 30
    /// Room beyond ``maximumMapSize`` kept for writes that only remove records (sign-out, delete, purge, eviction):
    /// a store at its cap can always be emptied. Tests shrink it to cross the purge's fallback to smaller batches.
    var reservedMapSize: Int = 4 << 20
    /// Open without write access; writes throw `.readOnly`.
    public var readOnly = false
    /// LMDB on NFS, SMB or FUSE can corrupt the store; refused unless this is set.
    public var allowNetworkFilesystem = false
    /// How long an open waits for another process's open lock (held while it opens the store, and by a compaction
    /// for its whole copy) and a write for another process's writer lock (held for its transaction), before it
    /// throws `.lockTimeout` naming that process. Every wait on another process is bounded: a process stopped with
    /// Ctrl-Z or `SIGSTOP` while it holds one of them would otherwise hang every other. 30 s by default; set it with
    /// `TOKEN_CACHE_LOCK_TIMEOUT` (seconds).
    public var lockTimeout: Duration = .seconds(30)
    /// Authority hosts that name the same cloud. Lookups, intersect-delete and sign-out match environments by
    /// these groups; the built-in table can be extended (``EnvironmentAliases/adding(_:)``).
    public var environmentAliases: EnvironmentAliases = .builtIn
    /// The cipher a store created with this configuration seals its records with, and the one an open that upgrades
    /// a store of format version 1 or 2 converts it to (FORMAT.md §7). nil (the default) chooses: for a store in a
    /// directory (or memory), ``StoreCipher/preferred``, AES-256-GCM where this machine runs it; for a shared store on a
    /// database server, whose hosts may include machines without AES-NI, XChaCha20-Poly1305 at creation and no
    /// conversion at upgrade. An existing store keeps the cipher it has whatever this says: a data-key rotation
    /// (`rotateDataKey(to:progress:)`) changes it. `TOKEN_CACHE_CIPHER` sets it (``Variable/cipher``).
    public var cipher: StoreCipher? = nil
    /// Where the records live when a package module chose the backend itself (a test's, or a server store's), instead
    /// of the directory or memory that ``directory`` names.
    package var storageLocation: (any StorageLocation)? = nil
    /// Whether a writable open finishes a data-key rotation it finds under way. Off only where a caller runs the
    /// rotation's steps itself (a rotation's own open, a test stopping one halfway).
    package var finishesRotation = true

    /// A configuration with the default limits for a store in `directory`, keyed by `keySource`.
    public init(directory: String, keySource: KeySource) {
        self.directory = directory
        self.keySource = keySource
    }

    /// The ``directory`` that names a store in this process's memory rather than on disk, as SQLite's `:memory:`: no
    /// file is touched, the records are sealed as on disk, and the store ends with its last reference.
    /// ``TokenStore/create(_:)`` makes a new, empty one each time; ``TokenStore/open(_:)`` finds none.
    public static let inMemoryDirectory = ":memory:"

    /// A configuration for a new in-memory store (``inMemoryDirectory``), its records sealed under a random key that
    /// exists only in this configuration and the store.
    public static func inMemory() -> Configuration {
        let key = withUnsafeTemporaryAllocation(byteCount: RootKey.byteCount, alignment: 1) { bytes in
            Random.fill(bytes)
            defer { Memory.zero(bytes) }
            return Secret(Base64.encode(UnsafeRawBufferPointer(bytes), variant: .original))
        }
        return Configuration(directory: inMemoryDirectory, keySource: .base64Key(key, origin: "an in-memory store's random key"))
    }

    /// Whether ``directory`` names an in-memory store.
    public var isInMemory: Bool { directory == Self.inMemoryDirectory }

    /// Environment variables the defaults read.
    public enum Variable {
        /// `TOKEN_CACHE_DIR`: the store directory (``Configuration/defaultDirectory(environment:)``).
        public static let directory = "TOKEN_CACHE_DIR"
        /// `TOKEN_CACHE_KEY_FILE`: the key file path (``Configuration/defaultKeyFilePath(environment:)``).
        public static let keyFile = "TOKEN_CACHE_KEY_FILE"
        /// `TOKEN_CACHE_PASSPHRASE`: a passphrase to derive the root key from, used when no base64 key is set.
        public static let passphrase = "TOKEN_CACHE_PASSPHRASE"
        /// `TOKEN_CACHE_KEY`: the 32-byte root key, base64-encoded; preferred over a passphrase and the key file.
        public static let base64Key = "TOKEN_CACHE_KEY"
        /// `interactive`, `moderate` or `sensitive`: sets ``Configuration/maximumPassphraseCost``.
        public static let maximumPassphraseCost = PassphraseCost.ceilingVariable
        /// A duration, more than 0 and at most a day: `30`, `30s`, `500ms` or `2m` (a bare number is seconds); sets
        /// ``Configuration/lockTimeout`` (``lockTimeout(parsing:)``).
        public static let lockTimeout = "TOKEN_CACHE_LOCK_TIMEOUT"
        /// `aes-256-gcm` or `xchacha20-poly1305`: sets ``Configuration/cipher``.
        public static let cipher = "TOKEN_CACHE_CIPHER"
    }

    /// `TOKEN_CACHE_DIR`, else `$XDG_DATA_HOME/token-cache`, else `~/.local/share/token-cache`.
    public static func defaultDirectory(environment: [String: String]) -> String {
        if let directory = environment[Variable.directory], !directory.isEmpty { return directory }
        return baseDirectory(environment["XDG_DATA_HOME"], fallback: ".local/share", environment: environment) + "/token-cache"
    }

    /// `TOKEN_CACHE_KEY_FILE`, else `$XDG_CONFIG_HOME/token-cache/key`, else `~/.config/token-cache/key`.
    public static func defaultKeyFilePath(environment: [String: String]) -> String {
        if let path = environment[Variable.keyFile], !path.isEmpty { return path }
        return baseDirectory(environment["XDG_CONFIG_HOME"], fallback: ".config", environment: environment) + "/token-cache/key"
    }

    /// `TOKEN_CACHE_KEY` (base64), else `TOKEN_CACHE_PASSPHRASE`, else the default key file.
    public static func defaultKeySource(environment: [String: String]) -> KeySource {
        if let key = environment[Variable.base64Key], !key.isEmpty {
            return .base64Key(Secret(key), origin: Variable.base64Key)
        }
        if let passphrase = environment[Variable.passphrase], !passphrase.isEmpty {
            return .passphrase(Secret(passphrase), origin: Variable.passphrase)
        }
        return .keyFile(path: defaultKeyFilePath(environment: environment))
    }

    /// The configuration the defaults above describe.
    /// An unknown `TOKEN_CACHE_MAX_PASSPHRASE_COST` or `TOKEN_CACHE_CIPHER` value, and a `TOKEN_CACHE_LOCK_TIMEOUT` that
    /// is not a number of seconds between 0 and a day, leave the default in place.
    public static func fromEnvironment(_ environment: [String: String]) -> Configuration {
        var configuration = Configuration(
            directory: defaultDirectory(environment: environment), keySource: defaultKeySource(environment: environment)
        )
        if let level = environment[Variable.maximumPassphraseCost].flatMap(PassphraseCost.named) {
            configuration.maximumPassphraseCost = level
        }
        if let timeout = environment[Variable.lockTimeout].flatMap(lockTimeout(parsing:)) {
            configuration.lockTimeout = timeout
        }
        if let cipher = environment[Variable.cipher].flatMap(cipher(parsing:)) {
            configuration.cipher = cipher
        }
        return configuration
    }

    /// A cipher as `TOKEN_CACHE_CIPHER` gives it: `aes-256-gcm` or `xchacha20-poly1305`, in any case, spaces around
    /// ignored; nil for anything else (which `cachetool` refuses, and ``fromEnvironment(_:)`` ignores).
    public static func cipher(parsing text: String) -> StoreCipher? {
        StoreCipher(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// A lock timeout as `TOKEN_CACHE_LOCK_TIMEOUT` gives it: a decimal number with an optional unit, `ms`, `s` (the
    /// default) or `m`, more than 0 and at most a day; nil for anything else.
    public static func lockTimeout(parsing text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(suffix: String, milliseconds: Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("", 1000)]
        guard let unit = units.first(where: { trimmed.hasSuffix($0.suffix) }),
            let value = Double(trimmed.dropLast(unit.suffix.count)), value.isFinite
        else { return nil }
        let milliseconds = value * unit.milliseconds
        guard milliseconds >= 1, milliseconds <= 86_400_000 else { return nil }
        return .milliseconds(Int64(milliseconds.rounded()))
    }

    /// The defaults for this process's environment.
    public static func fromEnvironment() -> Configuration { fromEnvironment(ProcessInfo.processInfo.environment) }

    /// XDG base directories must be absolute; a relative value is ignored, as the XDG spec requires.
    private static func baseDirectory(_ value: String?, fallback: String, environment: [String: String]) -> String {
        if let value, value.hasPrefix("/") { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/" + fallback
    }
}
