import Foundation
import ArgumentParser
import TokenCache

/// How `cachetool` reads the values people type: scopes as lists in either spelling, an account by its username,
/// and argument values the library rejects reported as usage errors (exit 64) that name the option.
enum Arguments {
    /// Refuses an option or argument given as an empty (or blank) string, naming it: a usage error (64), not a path
    /// or value that fails later with a less clear message.
    static func requireNonEmpty(_ value: String?, _ name: String) throws {
        if let value, value.allSatisfy(\.isWhitespace) { throw ValidationError("\(name) is empty") }
    }

    /// Scopes separated by spaces, commas or both: MSAL's APIs and most documentation write a list (`a,b`), OAuth
    /// and `az` a space-separated string (`a b`). Empty pieces are dropped.
    static func scopes(_ text: String) -> [String] {
        text.split(whereSeparator: { $0.isWhitespace || $0 == "," }).map(String.init)
    }

    /// `name=value` pairs (a request's body parameters), split at the first `=`; a usage error naming `option` for a
    /// pair without `=` or with an empty name, or a name given twice. The values are never echoed: a parameter may
    /// carry claims.
    static func parameters(_ pairs: [String], option: String) throws -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("\(option) takes name=value")
            }
            let name = String(pair[..<equals])
            guard parameters.updateValue(String(pair[pair.index(after: equals)...]), forKey: name) == nil else {
                throw ValidationError("\(option): the parameter \(Terminal.sanitize(name)) is given twice")
            }
        }
        return parameters
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
        guard let homeAccountID = try knownHomeAccountID(value, in: cache) else {
            Output.error("no account in the store has the username \(value); `cachetool accounts` lists them")
            throw ExitCode(66)
        }
        return homeAccountID
    }

    /// As ``homeAccountID(_:in:)``, but a username no account has is no error: nil, for a command to which "no such
    /// account" is an answer (a silent lookup answers `interaction_required`).
    static func knownHomeAccountID(_ value: String, in cache: TokenStore) throws -> String? {
        guard value.contains("@") else { return value }
        let matches = try cache.accounts(username: value).accounts
        switch matches.count {
        case 0:
            return nil
        case 1:
            return matches[0].homeAccountID
        default:
            Output.error("\(matches.count) accounts have the username \(value); name one by its home account id:")
            for match in matches { Output.note("  \(match.homeAccountID)  \(match.username ?? "")") }
            throw ExitCode(64)
        }
    }
}

extension Arguments {
    /// The entity kinds a list of `--kind` values names: each value one kind or several separated by commas, in
    /// the spellings `account`, `access-token`, `refresh-token`, `id-token`, `app-metadata` (plurals, MSAL's section
    /// names, the table's `access`/`refresh`/`id`/`app` and `at`/`rt`/`idt` accepted).
    static func entityKinds(_ values: [String], option: String) throws -> Set<EntityKind> {
        var kinds: Set<EntityKind> = []
        for value in values {
            for piece in value.split(separator: ",") {
                let name = piece.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "_", with: "-")
                switch name {
                case "account", "accounts": kinds.insert(.account)
                case "access-token", "access-tokens", "accesstoken", "access", "at": kinds.insert(.accessToken)
                case "refresh-token", "refresh-tokens", "refreshtoken", "refresh", "rt": kinds.insert(.refreshToken)
                case "id-token", "id-tokens", "idtoken", "id", "idt": kinds.insert(.idToken)
                case "app-metadata", "appmetadata", "app": kinds.insert(.appMetadata)
                default:
                    throw ValidationError(
                        "\(option): unknown kind '\(piece)'; use account, access-token, refresh-token, id-token or app-metadata"
                    )
                }
            }
        }
        return kinds
    }

    /// Seconds from a duration such as `90s`, `15m`, `2h`, `7d` or `1w`: a whole number and its unit. A number
    /// alone is refused, not read as seconds: `--expiring-within 5` more likely means five minutes than five
    /// seconds, and guessing wrong would select the wrong tokens (or purge them). A negative duration is refused by
    /// name (the options take a `-5d` as their value, so it reaches this check).
    static func duration(_ text: String, option: String) throws -> Int64 {
        let units: [(String, Int64)] = [("s", 1), ("m", 60), ("min", 60), ("h", 3_600), ("d", 86_400), ("w", 604_800)]
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let shown = Terminal.sanitize(text)
        let advice = "write a whole number and its unit: s, m, h, d or w (90s, 15m, 2h, 7d)"
        if trimmed.hasPrefix("-") {
            throw ValidationError("\(option): '\(shown)' is negative; \(advice)")
        }
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
        if !digits.isEmpty, unit.isEmpty {
            throw ValidationError("\(option): '\(shown)' has no unit; \(advice)")
        }
        guard !digits.isEmpty, let number = Int64(digits), let multiplier = units.first(where: { $0.0 == unit })?.1 else {
            throw ValidationError("\(option): '\(shown)' is not a duration; \(advice)")
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw ValidationError("\(option): '\(shown)' is too long a duration") }
        return seconds
    }
}
