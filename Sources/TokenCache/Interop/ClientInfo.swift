internal import TokenCacheRecords

/// AAD's `client_info`: base64url JSON naming the user (`uid`) and the user's home tenant (`utid`).
///
/// MSAL derives the home account id from it: `uid.utid`. Padding is optional; the object may carry other members
/// (they are ignored). Anything else (not base64url, not a JSON object, `uid` or `utid` missing, empty or not a
/// string) is rejected with ``TokenCacheError`` `.invalidArgument`, without quoting the input.
struct ClientInfo: Sendable, Hashable {
    /// The user's object id in the home tenant (for MSA, the account's id in the consumer tenant).
    let uid: String
    /// The home tenant id.
    let utid: String

    init(base64URL: String) throws {
        let invalid = TokenCacheError(.invalidArgument, "client_info is not base64url JSON with uid and utid")
        guard let decoded = Base64URL.decode(base64URL.utf8),
              let members = (try? ResponseJSON.parse(decoded))?.objectValue,
              let uid = members["uid"]?.stringValue, !uid.isEmpty,
              let utid = members["utid"]?.stringValue, !utid.isEmpty
        else { throw invalid }
        self.uid = uid
        self.utid = utid
    }

    /// `uid.utid`: MSAL's `home_account_id`.
    var homeAccountID: String { "\(uid).\(utid)" }
}
