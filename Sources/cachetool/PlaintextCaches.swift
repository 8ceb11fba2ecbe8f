import ArgumentParser
import Foundation
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// The plaintext MSAL caches Microsoft's tools leave on Linux, where `cachetool import --discover` and `--from`
/// look for them. Each is an MSAL serialized cache (JSON) readable by anyone who can read the file: on Linux these
/// tools have no OS key store they can count on, so they write the tokens in clear.
///
/// - **Azure CLI** (`azure-cli`): `msal_token_cache.json` in its configuration directory, `~/.azure`, or
///   `$AZURE_CONFIG_DIR` when set (Microsoft's advice for parallel jobs is one directory each). Azure CLI 2.30 and
///   later keep their MSAL cache there; only on Windows is it encrypted (DPAPI, as `msal_token_cache.bin`). Both
///   directories are searched: a cache left under `~/.azure` before `$AZURE_CONFIG_DIR` was set still holds tokens.
/// - **Azure Identity** (`azure-identity`): the persistent token cache of the Azure Identity libraries (Python,
///   .NET, JavaScript, through msal-extensions) lives in `~/.IdentityService`. Without a usable Secret Service
///   (headless machines, SSH, WSL, containers) and with unencrypted storage allowed, it is a plaintext file there:
///   `msal.cache` by default, and, in the libraries' newer versions, separate caches for tokens with and without
///   continuous access evaluation, `<name>.cae` and `<name>.nocae` (a custom cache name gives other names with
///   those suffixes). The directory is read, not guessed at: every `msal.cache*`, `*.cae` and `*.nocae` file.
///   msal-extensions' lock files (`*.lockfile`) are not caches. When the Secret Service is used, the file is only
///   touched as a change signal and stays empty.
enum PlaintextCaches {
    /// The tools whose caches are known.
    enum Tool: String, CaseIterable, ExpressibleByArgument, Sendable {
        case azureCLI = "azure-cli"
        case azureIdentity = "azure-identity"

        /// For messages.
        var displayName: String {
            switch self {
            case .azureCLI: "Azure CLI"
            case .azureIdentity: "Azure Identity"
            }
        }
    }

    /// A file found at a known location.
    struct Found: Sendable, Hashable {
        let tool: Tool
        let path: String
    }

    /// Azure CLI's file name in its configuration directory.
    static let azureCLIFile = "msal_token_cache.json"
    /// Azure Identity's directory under the home directory.
    static let azureIdentityDirectory = ".IdentityService"

    /// The home directory: `$HOME`, else the password database's.
    static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }

    /// Azure CLI's configuration directories, `$AZURE_CONFIG_DIR` first; each once.
    static func azureCLIDirectories(_ environment: [String: String]) -> [String] {
        var directories: [String] = []
        if let configured = environment["AZURE_CONFIG_DIR"], !configured.isEmpty {
            directories.append((configured as NSString).standardizingPath)
        }
        let standard = ((home(environment) as NSString).appendingPathComponent(".azure") as NSString).standardizingPath
        if !directories.contains(standard) { directories.append(standard) }
        return directories
    }

    /// Where the search looks, for messages ("looked for …").
    static func searched(_ environment: [String: String], tool: Tool? = nil) -> [String] {
        var places: [String] = []
        if tool != .azureIdentity {
            places += azureCLIDirectories(environment).map { ($0 as NSString).appendingPathComponent(azureCLIFile) }
        }
        if tool != .azureCLI {
            let directory = (home(environment) as NSString).appendingPathComponent(azureIdentityDirectory)
            places.append(directory + "/{msal.cache*,*.cae,*.nocae}")
        }
        return places
    }

    /// Whether a name in `~/.IdentityService` is an Azure Identity cache.
    static func isAzureIdentityCache(_ name: String) -> Bool {
        guard !name.hasSuffix(".lockfile") else { return false }
        return name.hasPrefix("msal.cache") || name.hasSuffix(".cae") || name.hasSuffix(".nocae")
    }

    /// The files that exist at the known locations (of one tool, or all), Azure CLI's first, each directory's in
    /// name order. Anything that is there is listed, including what is not a regular file (the caller says so).
    static func find(_ environment: [String: String], tool: Tool? = nil) -> [Found] {
        var found: [Found] = []
        if tool != .azureIdentity {
            for directory in azureCLIDirectories(environment) {
                let path = (directory as NSString).appendingPathComponent(azureCLIFile)
                var status = stat()
                if lstat(path, &status) == 0 { found.append(Found(tool: .azureCLI, path: path)) }
            }
        }
        if tool != .azureCLI {
            let directory = (home(environment) as NSString).appendingPathComponent(azureIdentityDirectory)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for name in names.sorted() where isAzureIdentityCache(name) {
                found.append(Found(tool: .azureIdentity, path: (directory as NSString).appendingPathComponent(name)))
            }
        }
        return found
    }
}
