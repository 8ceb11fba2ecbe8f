import ArgumentParser
import Foundation
import TokenCache

/// The options that name an on-behalf-of partition (MSAL's `user_assertion_hash`), for the commands that store, look
/// up or remove a web API's tokens for a caller: the partition's key, or the caller's assertion in a file (never on
/// the command line, where other users of the machine could read it), whose hash is the key.
struct OnBehalfOfOptions: ParsableArguments {
    @Option(
        name: .customLong("on-behalf-of"),
        help: ArgumentHelp(
            "The on-behalf-of partition: an assertion's hash (MSAL's user_assertion_hash) or a long-running process's own key.",
            valueName: "key"
        )
    )
    var key: String?

    @Option(
        name: .customLong("assertion-file"),
        help: ArgumentHelp("A file holding the caller's assertion (its incoming token): the partition is its hash.", valueName: "path")
    )
    var assertionFile: String?

    /// Whether a partition is named (its assertion file is read only by ``partition()``).
    var isGiven: Bool { key != nil || assertionFile != nil }

    /// Checks the options without reading the assertion file, which ``partition()`` reads once, when the command runs.
    func validate() throws { _ = try givenKey() }

    /// The partition named, or nil for none.
    func partition() throws -> OnBehalfOfKey? {
        if let key = try givenKey() { return key }
        guard let assertionFile else { return nil }
        guard let contents = FileManager.default.contents(atPath: assertionFile) else {
            throw ValidationError("--assertion-file: cannot read \(Terminal.sanitize(assertionFile))")
        }
        // A token file usually ends with a line break, which is not part of the token.
        let assertion = contents.reversed().drop(while: { $0 == 0x0A || $0 == 0x0D || $0 == 0x20 }).reversed()
        guard !assertion.isEmpty else { throw ValidationError("--assertion-file: \(Terminal.sanitize(assertionFile)) is empty") }
        return OnBehalfOfKey(assertion: Secret(bytes: assertion))
    }

    /// The key given with `--on-behalf-of`, checked; nil without one.
    private func givenKey() throws -> OnBehalfOfKey? {
        if key != nil && assertionFile != nil { throw ValidationError("--on-behalf-of cannot be combined with --assertion-file") }
        guard let key else { return nil }
        do { return try OnBehalfOfKey(longRunningProcessKey: key) } catch { throw ValidationError("--on-behalf-of: \(error.message)") }
    }
}
