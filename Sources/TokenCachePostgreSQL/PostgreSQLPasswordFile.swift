import Foundation
import TokenCacheStorage

/// libpq's password file (`~/.pgpass`, `PGPASSFILE`, or the URL's `passfile`): lines of
/// `hostname:port:database:username:password`, each field `*` for any value, `\:` and `\\` escaping, the first
/// matching line winning. A password there stays out of the command line and the environment, where other users'
/// `ps` and `/proc` could read it.
enum PostgreSQLPasswordFile {
    /// The password for `address` from its password file, or from `~/.pgpass` when it names none; nil when no line
    /// matches or there is no file.
    /// - Throws: `.insecurePermissions` when the file is readable by others than its owner (libpq ignores such a file;
    ///   refusing says why the password was not found).
    static func password(for address: PostgreSQLAddress, home: String? = ProcessInfo.processInfo.environment["HOME"]) throws(StorageError) -> String? {
        guard let path = address.passwordFile ?? home.map({ "\($0)/.pgpass" }) else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else {
            if address.passwordFile != nil { throw StorageError(.invalidArgument, "the password file \(path) cannot be read: \(String(cString: strerror(errno)))") }
            return nil
        }
        guard status.st_mode & 0o077 == 0 else {
            throw StorageError(
                .insecurePermissions, "the password file \(path) is readable by other users (mode \(String(status.st_mode & 0o777, radix: 8))); chmod 600 it"
            )
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw StorageError(.invalidArgument, "the password file \(path) cannot be read as UTF-8 text")
        }
        // For a Unix socket libpq matches the line's hostname against "localhost".
        let host = address.host ?? "localhost"
        let wanted = [host, String(address.port), address.database, address.user]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = split(line)
            guard fields.count == 5 else { continue }
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// The fields of one line, split at unescaped colons, escapes removed.
    static func split(_ line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var escaped = false
        for character in line {
            if escaped {
                field.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}
