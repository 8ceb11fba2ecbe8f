import ArgumentParser
import Foundation
import TokenCache

#if canImport(Glibc)
import Glibc
import TokenCacheMSAL
#endif

/// `cachetool export`: the store as an MSAL serialized cache, for MSAL Python, .NET, Go or Node, or for a look.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the store as an MSAL serialized token cache (JSON).",
        discussion: """
            Writes to standard output, or to FILE with -o. Without --include-secrets every secret is \
            "<redacted>" (said on standard error): the file can be read and shared, not used to sign in. With it, \
            a file is created with mode 0600 (an existing file with a looser mode is refused), and a terminal as \
            standard output needs --force.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(name: .customLong("include-secrets"), help: "Write the tokens themselves instead of the redaction marker.")
    var includeSecrets = false

    @Flag(help: "With --include-secrets, write to standard output even when it is a terminal.")
    var force = false

    @Option(name: .customLong("account"), help: ArgumentHelp("Only this account: its home account id (uid.utid), or its username.", valueName: "account"))
    var account: String?

    @Option(name: .customLong("client-id"), help: "Only this client's records.")
    var clientID: String?

    @Option(help: ArgumentHelp("Only this authority host's cloud (and its aliases).", valueName: "host"))
    var environment: String?

    func run() throws {
        try Failure.reporting {
            if includeSecrets, output == nil {
                if isatty(STDOUT_FILENO) == 1, !force {
                    throw ValidationError("refusing to print tokens on a terminal: write them to a file with -o, or add --force")
                }
                // `> file` creates the file with the shell's umask, often readable by everyone.
                var status = stat()
                if fstat(STDOUT_FILENO, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_mode & 0o077 != 0 {
                    throw ValidationError(
                        "standard output is a file others can read (mode \(String(status.st_mode & 0o777, radix: 8))); "
                            + "write tokens with -o FILE, which creates it with mode 0600")
                }
            }
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            let homeAccountID = try account.map { try Arguments.homeAccountID($0, in: cache) }
            let exportOptions = MSALExportOptions(
                includeSecrets: includeSecrets, filter: RecordFilter(homeAccountID: homeAccountID, clientID: clientID),
                environment: environment)
            let report: MSALExportReport
            if let output {
                report = try PrivateFile.write(to: output) { file in try cache.exportMSAL(options: exportOptions) { try file.write(contentsOf: $0) } }
            } else {
                report = try cache.exportMSAL(options: exportOptions) { FileHandle.standardOutput.write(Data($0)) }
            }
            if !includeSecrets {
                Output.note("secrets are redacted (\"\(Secret.redactionMarker)\"); add --include-secrets for a cache MSAL can use")
            }
            if !report.corrupt.isEmpty {
                Output.warning("\(report.corrupt.count) damaged record(s) left out: \(report.corrupt.map(\.fingerprint).joined(separator: ", "))")
            }
            if let output {
                Output.note("wrote \(report.writtenCount) records to \(output)")
            }
        }
    }
}

/// A file of secrets: created with mode 0600, written under a temporary name and renamed into place once complete
/// and flushed, so that a failure leaves the previous file (or none), never a partial one.
enum PrivateFile {
    static func write<R>(to path: String, _ body: (FileHandle) throws -> R) throws -> R {
        var status = stat()
        if lstat(path, &status) == 0 {
            if (status.st_mode & S_IFMT) != S_IFREG { throw ValidationError("\(path) exists and is not a regular file") }
            if status.st_mode & 0o077 != 0 {
                throw ValidationError(
                    "\(path) exists with mode \(String(status.st_mode & 0o777, radix: 8)); refusing to write tokens into a file others can read "
                        + "(remove it, or chmod 600 it first)")
            }
        }
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        let temporary = directory + "/.\((path as NSString).lastPathComponent).\(getpid()).tmp"
        // An unnamed file first (O_TMPFILE): a process killed while writing leaves no partial file of tokens behind.
        // It gets a name only once complete and flushed; filesystems without O_TMPFILE get the named file at once.
        // O_TMPFILE is `__O_TMPFILE | O_DIRECTORY` (<bits/fcntl-linux.h>), a macro Swift does not import.
        let temporaryFileFlag: Int32 = 0o20_000_000 | O_DIRECTORY
        var descriptor = open(directory, temporaryFileFlag | O_WRONLY | O_CLOEXEC, 0o600)
        let unnamed = descriptor >= 0
        if !unnamed { descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        guard descriptor >= 0 else { throw ValidationError("cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            let result = try body(handle)
            guard fsync(descriptor) == 0 else { throw ValidationError("cannot write \(path): \(String(cString: strerror(errno)))") }
            if unnamed, linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, temporary, AT_SYMLINK_FOLLOW) != 0 {
                throw ValidationError("cannot name \(temporary): \(String(cString: strerror(errno)))")
            }
            guard rename(temporary, path) == 0 else { throw ValidationError("cannot write \(path): \(String(cString: strerror(errno)))") }
            // The new name, durable.
            let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directoryDescriptor >= 0 {
                fsync(directoryDescriptor)
                close(directoryDescriptor)
            }
            return result
        } catch {
            unlink(temporary)
            throw error
        }
    }
}
