import Foundation

/// The web host's command line:
/// `token-cache-web --store DIR|URL --key-file PATH --idp http://HOST:PORT --name NAME [--bind 127.0.0.1] [--port 0]
/// [--store-timeout-ms 2000] [--tenant ID]`.
struct HostOptions: Sendable {
    /// A directory, or a shared store's `postgresql://` URL.
    var store: String
    var keyFile: String
    /// The identity provider's base URL (its token endpoint is `/token` under it).
    var identityProvider: URL
    /// The name this host reports in `/stats` and sends the identity provider, so that instances on one address
    /// can be told apart.
    var name: String
    var bind = "127.0.0.1"
    var port = 0
    /// The bound of every wait on a shared store's server.
    var storeTimeout: Duration = .milliseconds(2000)
    /// The users' tenant: the authority tokens are asked from is `https://login.microsoftonline.com/<tenant>`. The
    /// fake identity provider's by default.
    var tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

    static let usage =
        "usage: token-cache-web --store DIR|postgresql://URL --key-file PATH --idp http://HOST:PORT --name NAME [--bind ADDRESS] [--port N] [--store-timeout-ms N] [--tenant ID]"

    init(arguments: [String]) throws(UsageError) {
        var values: [String: String] = [:]
        var index = 0
        let known: Set<String> = ["--store", "--key-file", "--idp", "--name", "--bind", "--port", "--store-timeout-ms", "--tenant"]
        while index < arguments.count {
            let flag = arguments[index]
            guard known.contains(flag), index + 1 < arguments.count else { throw UsageError("unknown or incomplete option") }
            values[flag] = arguments[index + 1]
            index += 2
        }
        guard let store = values["--store"], let keyFile = values["--key-file"], let name = values["--name"],
            let idp = values["--idp"], let url = URL(string: idp), url.scheme == "http" || url.scheme == "https"
        else { throw UsageError("--store, --key-file, --idp (an http URL) and --name are required") }
        self.store = store
        self.keyFile = keyFile
        self.identityProvider = url
        self.name = name
        if let bind = values["--bind"] { self.bind = bind }
        if let port = values["--port"] {
            guard let number = Int(port), (0...65535).contains(number) else { throw UsageError("--port takes 0 to 65535") }
            self.port = number
        }
        if let timeout = values["--store-timeout-ms"] {
            guard let milliseconds = Int(timeout), milliseconds > 0 else { throw UsageError("--store-timeout-ms takes a positive number") }
            storeTimeout = .milliseconds(milliseconds)
        }
    }
}

/// A command line the host cannot run with.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
