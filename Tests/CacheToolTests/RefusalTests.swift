import Foundation
import Testing

/// A command that refuses what it was asked says what was wrong, exits 64, and shows its own usage: never the
/// root's `cachetool <subcommand>`, whether the refusal comes from parsing or from the command once it runs. Bad
/// durations are refused by the option's name and value.
@Suite struct RefusalTests {
    static func store(_ body: (CLIStore) throws -> Void) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            try body(store)
        }
    }

    static func expectRefusal(_ run: CacheToolRun, command: String, message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.exitedNormally && run.status == 64, "\(run.output)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains(message), "\(run.output)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains("Usage: cachetool \(command) "), "\(run.output)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains("See 'cachetool \(command) --help'"), "\(run.output)", sourceLocation: sourceLocation)
        #expect(!run.stderr.contains("<subcommand>"), "\(run.output)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, "\(run.output)", sourceLocation: sourceLocation)
    }

    @Test func refusalsWhileRunningShowTheirCommandsUsage() throws {
        try Self.store { store in
            Self.expectRefusal(
                try store.run(["rekey", "--new-key-file", store.keyFile]), command: "rekey",
                message: "--new-key-file: \(store.keyFile) is the current key file"
            )
            Self.expectRefusal(
                try store.run(["lookup", "--client-id", "c", "--account", "u.t", "--authority", "notaurl", "--scopes", "s"]),
                command: "lookup", message: "--authority: "
            )
            let response = store.root + "/response.json"
            try SilentFlowCLITests.response(accessToken: "a", refreshToken: "r").write(toFile: response, atomically: true, encoding: .utf8)
            Self.expectRefusal(
                try store.run(["ingest", "--client-id", "c", "--authority", "notaurl", "--scopes", "s", response]),
                command: "ingest", message: "--authority: "
            )
        }
    }

    /// `export --include-secrets` on a terminal: run under `script`, which gives the command a pseudo-terminal.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func refusingToPrintTokensOnATerminalShowsExportsUsage() throws {
        try Self.store { store in
            let command = "\"\(CacheTool.binary.path)\" export --include-secrets 2>&1; echo \"exit=$?\""
            let run = try CacheTool.run(
                [], environment: store.environment, shell: "exec /usr/bin/script -qec '\(command)' /dev/null #"
            )
            let text = run.stdout.replacingOccurrences(of: "\r\n", with: "\n")
            #expect(text.contains("refusing to print tokens on a terminal"), "\(text)")
            #expect(text.contains("Usage: cachetool export ") && text.contains("See 'cachetool export --help'"), "\(text)")
            #expect(!text.contains("<subcommand>") && text.contains("exit=64"), "\(text)")
        }
    }

    @Test(arguments: [
        (["purge-expired", "--older-than", "-5d"], "purge-expired", "--older-than: '-5d' is negative"),
        (["purge-expired", "--older-than", "soon"], "purge-expired", "--older-than: 'soon' is not a duration"),
        (["purge-expired", "--older-than", "7"], "purge-expired", "--older-than: '7' has no unit"),
        (["inspect", "--expiring-within", "5"], "inspect", "--expiring-within: '5' has no unit"),
        (["inspect", "--expiring-within", "-15m"], "inspect", "--expiring-within: '-15m' is negative"),
        (["inspect", "--expiring-within", "1.5h"], "inspect", "--expiring-within: '1.5h' is not a duration"),
    ] as [([String], String, String)])
    func badDurationsNameTheOptionAndTheValue(arguments: [String], command: String, message: String) throws {
        try Self.store { store in
            Self.expectRefusal(try store.run(arguments), command: command, message: message)
        }
    }
}
