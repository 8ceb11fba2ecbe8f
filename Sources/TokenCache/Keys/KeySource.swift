/// Where the root key of a store comes from (FORMAT.md §6.2). The root key never touches the store:
/// it only unwraps the data keys in the store header.
public enum KeySource: Sendable, CustomStringConvertible {
    /// A file holding exactly 32 random bytes, mode 0600, owned by the user, not a symlink
    /// (created by `cachetool init` or ``KeyFile/create(at:)``).
    case keyFile(path: String)
    /// A passphrase, stretched with Argon2id using the parameters and salt stored in the store header.
    /// `origin` names where it came from (an environment variable) for error messages.
    case passphrase(Secret, origin: String)
    /// 32 bytes, base64-encoded (standard alphabet, with padding), for containers and CI.
    /// `origin` names where it came from (an environment variable) for error messages.
    case base64Key(Secret, origin: String)

    /// Names the source (the key file's path, or the origin of a passphrase or key) without any key material.
    public var description: String {
        switch self {
        case .keyFile(let path): "key file \(path)"
        case .passphrase(_, let origin): "passphrase from \(origin)"
        case .base64Key(_, let origin): "base64 key from \(origin)"
        }
    }
}

/// Argon2id work factors for passphrase-protected stores. Stored in the header, where anyone who can write the store
/// can change them: a reader refuses values below ``interactive`` (a tampered header must not weaken the KDF) and
/// above the configured ceiling (``Configuration/maximumPassphraseCost``, default ``moderate``: at most 256 MiB and
/// about 0.7 s per open; never above ``sensitive``), before running Argon2id.
public struct PassphraseCost: Sendable, Hashable {
    /// Argon2id passes over memory (libsodium's `opslimit`).
    public var opsLimit: UInt64
    /// Argon2id memory, in bytes (libsodium's `memlimit`).
    public var memLimit: UInt64

    /// Explicit work factors; an open refuses values below ``interactive`` or above
    /// ``Configuration/maximumPassphraseCost``.
    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// libsodium's INTERACTIVE: 2 passes over 64 MiB (about 75 ms here). The default and the floor.
    public static let interactive = PassphraseCost(opsLimit: 2, memLimit: 64 << 20)
    /// libsodium's MODERATE: 3 passes over 256 MiB (about 0.7 s).
    public static let moderate = PassphraseCost(opsLimit: 3, memLimit: 256 << 20)
    /// libsodium's SENSITIVE: 4 passes over 1 GiB (about 4 s). The ceiling.
    public static let sensitive = PassphraseCost(opsLimit: 4, memLimit: 1 << 30)

    static let minimum = interactive
    /// The environment variable that raises the configured ceiling: named here, with the refusal that points to it,
    /// and given to the configuration as ``Configuration/Variable/maximumPassphraseCost``.
    static let ceilingVariable = "TOKEN_CACHE_MAX_PASSPHRASE_COST"
    /// The ceiling no configuration can raise.
    static let hardMaximum = sensitive

    /// The level named `interactive`, `moderate` or `sensitive` (ASCII case-insensitive), or nil.
    public static func named(_ name: String) -> PassphraseCost? {
        switch name.lowercased() {
        case "interactive": .interactive
        case "moderate": .moderate
        case "sensitive": .sensitive
        default: nil
        }
    }

    /// Whether deriving with `self` may take more memory or work (passes × memory) than with `other`.
    func exceeds(_ other: PassphraseCost) -> Bool {
        let (work, overflow) = opsLimit.multipliedReportingOverflow(by: memLimit)
        let (otherWork, otherOverflow) = other.opsLimit.multipliedReportingOverflow(by: other.memLimit)
        if memLimit > other.memLimit { return true }
        if otherOverflow { return false }  // the other's work is beyond any UInt64
        return overflow || work > otherWork
    }

    func check(maximum configured: PassphraseCost) throws(TokenCacheError) {
        if opsLimit < Self.minimum.opsLimit || memLimit < Self.minimum.memLimit {
            throw TokenCacheError(
                .keyUnavailable,
                "passphrase parameters (opslimit \(opsLimit), memlimit \(memLimit)) are below the minimum "
                    + "(opslimit \(Self.minimum.opsLimit), memlimit \(Self.minimum.memLimit)); refusing a weakened key derivation"
            )
        }
        let maximum = configured.exceeds(Self.hardMaximum) ? Self.hardMaximum : configured
        if exceeds(maximum) {
            throw TokenCacheError(
                .keyUnavailable,
                "passphrase parameters (opslimit \(opsLimit), memlimit \(memLimit)) exceed the configured maximum "
                    + "(opslimit \(maximum.opsLimit), memlimit \(maximum.memLimit)); if this store was created with a costlier "
                    + "passphrase setting, allow it with \(Self.ceilingVariable)=moderate or sensitive "
                    + "(Configuration.maximumPassphraseCost)"
            )
        }
    }
}
