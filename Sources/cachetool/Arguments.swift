import ArgumentParser
import TokenCache

/// How `cachetool` reads the values people type: scopes as lists in either spelling, an account by its username,
/// and argument values the library rejects reported as usage errors (exit 64) that name the option.
enum Arguments {
    /// Scopes separated by spaces, commas or both: MSAL's APIs and most documentation write a list (`a,b`), OAuth
    /// and `az` a space-separated string (`a b`). Empty pieces are dropped.
    static func scopes(_ text: String) -> [String] {
        text.split(whereSeparator: { $0.isWhitespace || $0 == "," }).map(String.init)
    }

    /// The authority URL of `option`, or a usage error naming it.
    static func authority(_ text: String, option: String = "--authority") throws -> Authority {
        do {
            return try Authority(text)
        } catch let error as TokenCacheError where error.code == .invalidArgument {
            throw ValidationError("\(option): \(error.message)")
        }
    }

    /// The home account id that `--account` names. A value with `@` is a username (home account ids never hold
    /// one): the one account whose username it is, ASCII case-insensitively. Several accounts with that username
    /// are listed, and the command stops with a usage error (64); none, with "not found" (66). Any other value is
    /// taken as a home account id, as it is.
    static func homeAccountID(_ value: String, in cache: TokenStore) throws -> String {
        guard value.contains("@") else { return value }
        let matches = try cache.accounts(username: value).accounts
        switch matches.count {
        case 1:
            return matches[0].homeAccountID
        case 0:
            Output.error("no account in the store has the username \(value); `cachetool accounts` lists them")
            throw ExitCode(66)
        default:
            Output.error("\(matches.count) accounts have the username \(value); name one by its home account id:")
            for match in matches { Output.note("  \(match.homeAccountID)  \(match.username ?? "")") }
            throw ExitCode(64)
        }
    }
}
