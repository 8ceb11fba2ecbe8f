import Foundation

@testable import TokenCache
@testable import TokenCacheMSAL

/// Fixtures and helpers the MSAL import/export tests share.
enum MSALTestSupport {
    /// Reads and maps a whole document, folding repeated identities.
    static func importAll(_ bytes: [UInt8], chunkSize: Int? = nil) throws -> MSALImportFold {
        var reader = MSALCacheReader(bytes: bytes, chunkSize: chunkSize)
        var fold = MSALImportFold()
        while let entry = try reader.next() { try fold.add(entry) }
        return fold
    }

    /// `content` with every list in key order, so that two contents compare regardless of fold order.
    static func sorted(_ content: MSALCacheContent) -> MSALCacheContent {
        var copy = content
        // Bound access tokens and family refresh tokens may share the plain key: their distinguished key orders them.
        func order(_ entity: MSALEntity) -> String { MSALCacheKey.key(of: entity) + "|" + (MSALCacheKey.distinguishedKey(of: entity) ?? "") }
        copy.accessTokens.sort { order(.accessToken($0)) < order(.accessToken($1)) }
        copy.refreshTokens.sort { order(.refreshToken($0)) < order(.refreshToken($1)) }
        copy.idTokens.sort { MSALCacheKey.key(of: $0) < MSALCacheKey.key(of: $1) }
        copy.accounts.sort { MSALCacheKey.key(of: $0) < MSALCacheKey.key(of: $1) }
        copy.appMetadata.sort { MSALCacheKey.key(of: $0) < MSALCacheKey.key(of: $1) }
        return copy
    }

    /// The one entry of `section` in a document made of that section alone.
    static func document(section: String = "AccessToken", key: String = "k", entry: String) -> [UInt8] {
        Array("{\"\(section)\": {\"\(key)\": \(entry)}}".utf8)
    }

    /// Maps the single entry of a one-entry document.
    static func mapOne(section: String = "AccessToken", key: String = "k", _ entry: String) throws -> MSALEntity {
        var reader = MSALCacheReader(bytes: document(section: section, key: key, entry: entry))
        guard let item = try reader.next() else { throw MSALImportError(.syntax, "no entry") }
        return try MSALEntityMapping.entity(from: item)
    }

    /// The import error mapping a one-entry document gives, if any.
    static func mappingError(section: String = "AccessToken", key: String = "k", _ entry: String) -> MSALImportError? {
        do {
            _ = try mapOne(section: section, key: key, entry)
            return nil
        } catch let error as MSALImportError {
            return error
        } catch {
            return nil
        }
    }

    /// A complete, valid access-token entry as JSON members (without braces), for tests that change one field.
    static let accessTokenMembers = """
        "home_account_id": "uid.utid", "environment": "login.microsoftonline.com", "client_id": "client-1", \
        "realm": "tenant-1", "target": "User.Read", "secret": "AT-CANARY-7731", "cached_at": "1700000000", \
        "expires_on": "1700003600", "credential_type": "AccessToken"
        """

    static func accessToken(_ extra: String = "", replacing removed: [String] = []) -> String {
        var members = accessTokenMembers
        for name in removed {
            members = members.replacingOccurrences(
                of: "\"\(name)\": \"[^\"]*\",? ?", with: "", options: .regularExpression)
        }
        if members.hasSuffix(", ") { members.removeLast(2) }
        return "{" + members + (extra.isEmpty ? "" : ", " + extra) + "}"
    }
}

extension MSALEntity {
    var accessToken: AccessToken? { if case .accessToken(let token) = self { token } else { nil } }
    var refreshToken: RefreshToken? { if case .refreshToken(let token) = self { token } else { nil } }
    var idToken: IDToken? { if case .idToken(let token) = self { token } else { nil } }
    var account: Account? { if case .account(let account) = self { account } else { nil } }
    var appMetadata: AppMetadata? { if case .appMetadata(let metadata) = self { metadata } else { nil } }
}
