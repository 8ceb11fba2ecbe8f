import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A usage error a command finds only once it runs (a terminal where secrets would be printed, a new key file that
/// is the current one, an authority the library rejects): printed like the usage errors found while parsing, with
/// the usage of the command that refused.
///
/// ArgumentParser formats an error from `run()` against the type it is handed; handed the root, it would print the
/// root's usage (`cachetool <subcommand>`) under a subcommand's refusal, which tells the reader nothing.
enum Refusal {
    /// Prints ``message(_:command:)`` on standard error and exits 64 (usage).
    static func exit(_ error: ValidationError, command: any ParsableCommand.Type) -> Never {
        guard command != CacheTool.self else { CacheTool.exit(withError: error) }
        FileHandle.standardError.write(Data((message(error, command: command) + "\n").utf8))
        Glibc.exit(ExitCode.validationFailure.rawValue)
    }

    /// `Error: <message>`, the usage of `command` and where its help is.
    static func message(_ error: ValidationError, command: any ParsableCommand.Type) -> String {
        let usage = CacheTool.usageString(for: command).trimmingCharacters(in: .whitespacesAndNewlines)
        return """
            Error: \(Terminal.sanitize(error.message))
            Usage: \(usage)
              See 'cachetool \(command._commandName) --help' for more information.
            """
    }
}
