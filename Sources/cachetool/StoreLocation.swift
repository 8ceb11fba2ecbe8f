import ArgumentParser

/// What a store location given to cachetool may be. A store is a directory: a location that starts like a URL
/// (`postgresql://…`, `file:///…`, any `scheme://`) names a kind of store this version does not have, and taken as a
/// relative path it would create folders named after the scheme in the working directory.
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

    /// Refuses a location that looks like a URL (usage error, exit 64), naming where it came from.
    static func check(_ location: String, from source: String) throws {
        guard let scheme = urlScheme(of: location) else { return }
        throw ValidationError(
            "\(source): \(Terminal.sanitize(location)) is a URL; stores at a URL (\(Terminal.sanitize(String(scheme)))://) are not supported by this "
                + "version: give the store's directory"
        )
    }
}
