import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `salvage` stopped at any point, by a kill of its child or of its parent, SIGKILL included, and run again with the
/// same output: a kill is no damage, so nothing is skipped, and the salvage finished after the stops copies what
/// one never stopped copies. Its parent takes the output exclusively, and the child ends with it.
@Suite struct SalvageResumeTests {
    enum Whom: String { case child, parent }

    /// What stopping a salvage left: how its parent ended, and what it printed on standard error.
    struct Stopped {
        var reason: Process.TerminationReason
        var status: Int32
        var stderr: String
    }

    /// Runs `cachetool salvage -o target` and sends `signal` to its child or its parent once it reads at or past
    /// `position`; returns when both have ended (each wait bounded).
    static func salvage(_ store: CLIStore, into target: String, stoppedAt position: Int, by signal: Int32, sentTo whom: Whom) throws -> Stopped {
        let errors = store.root + "/salvage-stderr-\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: errors, contents: nil))
        let process = Process()
        process.executableURL = CacheTool.binary
        process.arguments = ["salvage", "-o", target, "--json"]
        process.environment = store.processEnvironment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        var child = try ChildProcesses.containedChild(of: process)
        defer { ChildProcesses.endBoth(child: child, parent: process) }
        let reached = ChildProcesses.within(seconds: 60) { (SalvageFixtures.readingPosition(target) ?? 0) >= position || !process.isRunning }
        #expect(reached && process.isRunning, "the salvage ended before it read range \(position)")
        // The child now: on a damaged store, the one started again after a crash.
        child = ChildProcesses.children(of: process.processIdentifier).first ?? child
        #expect(kill(whom == .child ? child : process.processIdentifier, signal) == 0)
        #expect(ChildProcesses.within(seconds: 5) { ChildProcesses.hasEnded(child) }, "\(whom) sent \(signal): the child (pid \(child)) outlived it")
        #expect(ChildProcesses.within(seconds: 5) { !process.isRunning }, "\(whom) sent \(signal): the parent did not end")
        let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        return Stopped(reason: process.isRunning ? .exit : process.terminationReason, status: process.isRunning ? -1 : process.terminationStatus, stderr: stderr)
    }

    /// Stops a salvage into `target` at each of `stops` in turn, then runs it to the end; returns its JSON.
    static func stoppedAndResumed(_ store: CLIStore, into target: String, stops: [(position: Int, signal: Int32, whom: Whom)]) throws -> [String: Any] {
        for (position, signal, whom) in stops {
            let stopped = try salvage(store, into: target, stoppedAt: position, by: signal, sentTo: whom)
            // The parent ends by the signal that ended the child (its own, or the one it forwarded or died of).
            #expect(stopped.reason == .uncaughtSignal && stopped.status == signal, "\(whom) sent \(signal): \(stopped.status) \(stopped.stderr)")
            #expect(!stopped.stderr.contains("corruptStore"), "\(whom) sent \(signal): \(stopped.stderr)")
            if whom == .child { #expect(stopped.stderr.contains("not by damage: nothing was skipped"), "\(stopped.stderr)") }
        }
        let finished = try store.run(["salvage", "-o", target, "--json"])
        #expect(finished.exitedNormally && finished.status == 0, "\(finished.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(finished.stdout.utf8)) as? [String: Any], "\(finished.output)")
    }

    /// Positions in accounts, access tokens, refresh tokens and ID tokens, each stopped differently.
    static let stops: [(position: Int, signal: Int32, whom: Whom)] = [
        (1 << 16 + 30_000, SIGKILL, .child), (2 << 16 + 40_000, SIGKILL, .parent), (3 << 16 + 20_000, SIGTERM, .child),
        (4 << 16 + 50_000, SIGINT, .parent),
    ]

    @Test func aSalvageStoppedAtAnyPointAndRunAgainCopiesEveryRecordOfAHealthyStore() throws {
        try CLIStore.with { store in
            try SalvageFixtures.seeded(store)
            let target = store.root + "/salvaged"
            let report = try Self.stoppedAndResumed(store, into: target, stops: Self.stops)
            #expect(report["unreadable_ranges"] as? Int == 0 && report["damaged_records"] as? Int == 0 && report["resumed"] as? Bool == true, "\(report)")
            #expect((report["salvaged"] as? [String: Int]) == ["AccessToken": 2_000, "RefreshToken": 300, "Account": 300, "IdToken": 300, "AppMetadata": 0])
            let original = try SalvageFixtures.entries(store.directory), copied = try SalvageFixtures.entries(target)
            for name in SalvageFixtures.databases.dropFirst() {
                #expect(copied[name, default: []] == original[name, default: []], "\(name): \(copied[name]?.count ?? 0) of \(original[name]?.count ?? 0)")
            }
        }
    }

    /// On a store with a damaged page that crashes LMDB, a salvage stopped several times and run again copies at
    /// least what one never stopped copies: the stops add no skipped range to those the crashes cost.
    @Test func aSalvageStoppedAndRunAgainCopiesFromADamagedStoreAtLeastWhatAnUnstoppedOneCopies() throws {
        try CLIStore.with { store in
            try SalvageFixtures.seeded(store, accessTokens: 3_000)
            let path = store.directory + "/data.mdb"
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            let pageSize = 4096
            func field(_ bytes: Data, _ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
            let leaves = (2..<original.count / pageSize).filter { field(original, $0 * pageSize + 10) == 2 }
            try #require(leaves.count >= 10)
            // The first damage (a leaf's lower bound or first node offset) that makes LMDB crash, and what a salvage
            // never stopped copies despite it.
            var reference: [String: Set<[UInt8]>]?
            // Which damage crashes LMDB depends on the page layout, which the store's random index key shuffles from run
            // to run: nine leaves, tried in an order that starts from the middle third, find one in every run.
            let probes = [3, 4, 5, 2, 6, 1, 7, 8, 0].map { leaves[(2 * $0 + 1) * leaves.count / 18] }
            search: for page in probes {
                for (offset, value) in [(12, 4000), (16, 65000)] {
                    var damaged = original
                    damaged[page * pageSize + offset] = UInt8(value & 0xFF)
                    damaged[page * pageSize + offset + 1] = UInt8(value >> 8)
                    try damaged.write(to: URL(fileURLWithPath: path))
                    let unstopped = store.root + "/unstopped-\(page)-\(offset)"
                    let run = try store.run(["salvage", "-o", unstopped, "--json"])
                    #expect(run.exitedNormally && run.status == 0, "\(run.output)")
                    if run.stderr.contains("going on after it") {
                        reference = try SalvageFixtures.entries(unstopped)
                        break search
                    }
                }
            }
            let copiedUnstopped = try #require(reference, "no damage made LMDB crash: the test no longer exercises a salvage's restart")
            let target = store.root + "/salvaged"
            let report = try Self.stoppedAndResumed(store, into: target, stops: Self.stops)
            #expect((report["unreadable_ranges"] as? Int ?? 0) > 0, "\(report)")
            let copied = try SalvageFixtures.entries(target)
            for name in SalvageFixtures.databases.dropFirst() {
                #expect(copied[name, default: []].isSuperset(of: copiedUnstopped[name, default: []]),
                        "\(name): \(copied[name]?.count ?? 0) copied, \(copiedUnstopped[name]?.count ?? 0) without stops")
            }
            try original.write(to: URL(fileURLWithPath: path))
        }
    }
}
