/// Something that changed in the store, as ``TokenClient/changes()`` reports it. Names accounts and clients,
/// never a token.
public enum CacheChange: Sendable, Hashable {
    /// An account signed in for the first time (or again after it was signed out everywhere).
    case accountAdded(AccountReference)
    /// An account's last tokens and profiles went: signed out everywhere.
    case accountRemoved(AccountReference)
    /// Tokens of an account were written for a client: a sign-in, a refresh, an ingest.
    case tokensWritten(AccountReference, clientID: String)
    /// An account was signed out of one client (`clientID`), or everywhere (nil) while it keeps no profile.
    case tokensRemoved(AccountReference, clientID: String?)
    /// Another process wrote to the store, and what it wrote is not known here beyond the account changes reported
    /// beside this (a refresh in another process, say). Look up again what you keep.
    case changedElsewhere
    /// The store was rekeyed (new passphrase or key file, a data-key rotation) by another handle: reads and writes go
    /// on with the data keys this client holds or the new one its root key opens. After a new root key, a new client
    /// (opening the store again) needs that key; writes are refused (`.conflict`) only when this client can follow
    /// neither (a new root key and a new data key both), and a new client with the new key writes again.
    case storeRekeyed
}

/// An account as a change names it.
public struct AccountReference: Sendable, Hashable {
    /// The home account id (`uid.utid`).
    public var homeAccountID: String
    /// The username, when an Account record names it.
    public var username: String?
}
