/// The five kinds of record of the MSAL unified token cache.
public enum EntityKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case account = "Account"
    case accessToken = "AccessToken"
    case refreshToken = "RefreshToken"
    case idToken = "IdToken"
    case appMetadata = "AppMetadata"

    /// The MSAL section name, e.g. `AccessToken`.
    public var description: String { rawValue }
}

/// An entity the cache stores: ``Account``, ``AccessToken``, ``RefreshToken``, ``IDToken`` or ``AppMetadata``.
///
/// Each has a ``Key``: the fields that identify it (MSAL's cache key, without MSAL's ambiguous
/// string form). Writing an entity whose key equals a stored one replaces it.
public protocol CacheEntity: Sendable, Hashable {
    associatedtype Key: Sendable, Hashable
    static var kind: EntityKind { get }
    /// The identity of this entity in the cache.
    var key: Key { get }
    /// Fields this library does not model, preserved verbatim (encrypted) through every write.
    var additionalFields: [String: JSONValue] { get set }
    /// Only the five entity types of this module can provide one (``CacheEntityWitness`` has no public initialiser),
    /// which closes the protocol: every `CacheEntity` a caller can pass to the store is one the store can write, so
    /// no write of an entity fails at run time for its type.
    static var witness: CacheEntityWitness<Self> { get }
}

/// The proof that a type is one of the five entity types: only this module can make one (see
/// ``CacheEntity/witness``).
public struct CacheEntityWitness<Entity: CacheEntity>: Sendable {
    package init() {}
}

extension Account { public static var witness: CacheEntityWitness<Account> { CacheEntityWitness() } }
extension AccessToken { public static var witness: CacheEntityWitness<AccessToken> { CacheEntityWitness() } }
extension RefreshToken { public static var witness: CacheEntityWitness<RefreshToken> { CacheEntityWitness() } }
extension IDToken { public static var witness: CacheEntityWitness<IDToken> { CacheEntityWitness() } }
extension AppMetadata { public static var witness: CacheEntityWitness<AppMetadata> { CacheEntityWitness() } }
