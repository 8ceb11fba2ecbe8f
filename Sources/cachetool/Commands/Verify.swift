import ArgumentParser
import TokenCache

/// `cachetool verify`: decrypt everything and check the format's invariants.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decrypt every record and check that each is stored where its fields say (exit 65 on any problem)."
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        var clean = true
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            let records = try cache.info().recordCounts.values.reduce(0, +)
            let bar = ProgressBar(label: "verifying", unit: "records", delay: 1.0)
            let report = try cache.verify { bar?.update(done: $0, total: records) }
            bar?.finish()
            clean = report.isClean
            let problems = report.corrupt.map { ($0, "corrupt") } + report.misplaced.map { ($0, "misplaced") }
            if json {
                print(
                    JSONValue.object([
                        "verified": .counts(report.verified),
                        "lone_tokens_under_entry_key": .integer(Int64(report.loneTokensUnderEntryKey)),
                        "meta_page_problem": report.metaPageProblem.map { .string($0) } ?? .null,
                        "problems": .array(problems.map { record, problem in
                            .object(["kind": .string(record.kind.rawValue), "fingerprint": .string(record.fingerprint),
                                     "problem": .string(problem), "reason": .string(record.reason)])
                        }),
                    ]).prettyPrinted()
                )
            } else {
                let total = report.verified.values.reduce(0, +)
                let problemCount = problems.count + (report.metaPageProblem == nil ? 0 : 1)
                print("\(total) record\(total == 1 ? "" : "s") verified, \(problemCount) problem\(problemCount == 1 ? "" : "s").")
                if let problem = report.metaPageProblem { print(problem) }
                if report.loneTokensUnderEntryKey > 0 {
                    print("\(report.loneTokensUnderEntryKey) lone access token(s) under their entry key, not their bucket prefix: valid, slower to look up (an upgrade still placing tokens; a writable open resumes it).")
                }
                for (record, problem) in problems {
                    print(Terminal.sanitize("\(problem) \(record.kind) record \(record.fingerprint): \(record.reason)"))
                }
            }
        }
        if !clean { throw ExitCode(65) }
    }
}
