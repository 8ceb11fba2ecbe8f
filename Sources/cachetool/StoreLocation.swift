import ArgumentParser
import TokenCache
import TokenCachePostgreSQL

/// What a store location given to cachetool may be: a directory, or a shared store's PostgreSQL URL
/// (`postgresql://…` or `postgres://…`). Any other location that starts like a URL (`file:///…`, any `scheme://`)
/// names a kind of store this version does not have, and taken as a relative path it would create folders named
/// after the scheme in the working directory.
enum StoreLocation {
    /// The URL scheme `location` starts with (RFC 3986: a letter, then letters, digits, `+`, `-` or `.`, then `://`),
    /// if any.
    static func urlScheme(of location: String) -> Substring? {
        guard let colon = location.firstIndex(of: ":"), location[colon...].hasPrefix("://") else { return nil }
        let scheme = location[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme
    }

    /// Refuses a location that looks like a URL but is not a usable PostgreSQL URL (usage error, exit 64), naming
    /// where it came from and what is wrong (never a password).
    static func check(_ location: String, from source: String) throws {
        guard let scheme = urlScheme(of: location) else { return }
        if Configuration.isSharedStoreURL(location) {
            do { _ = try Configuration.sharedStore(location, keySource: .keyFile(path: "")) } catch {
                throw ValidationError("\(source): \(Terminal.sanitize(error.message))")
            }
            return
        }
        throw ValidationError(
            "\(source): a store at a \(Terminal.sanitize(String(scheme)))://… URL is not supported: give the store's directory, or a "
                + "shared store's postgresql:// URL"
        )
    }
}
