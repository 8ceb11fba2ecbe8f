import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where `salvage -o` writes: checked before anything is copied, and held by one salvage at a time.
@Suite struct SalvageOutputTests {
    /// A second salvage into the output a salvage is writing is refused at once (exit 75), naming the pid writing
    /// it; the first finishes unharmed.
    @Test func aSecondSalvageIntoTheSameOutputIsRefusedNamingTheHolder() throws {
        try CLIStore.with { store in
            try SalvageFixtures.seeded(store)
            let target = store.root + "/salvaged"
            let first = Process()
            first.executableURL = CacheTool.binary
            first.arguments = ["salvage", "-o", target, "--json"]
            first.environment = store.processEnvironment
            first.standardOutput = FileHandle.nullDevice
            first.standardError = FileHandle.nullDevice
            try first.run()
            defer {
                if first.isRunning { kill(first.processIdentifier, SIGKILL) }
                first.waitUntilExit()
            }
            let holder = try ChildProcesses.containedChild(of: first)
            #expect(ChildProcesses.within(seconds: 30) { SalvageFixtures.readingPosition(target) != nil })
            let second = try store.run(["salvage", "-o", target])
            #expect(first.isRunning, "the first salvage ended before the second one started: the test proves nothing")
            #expect(second.exitedNormally && second.status == 75, "\(second.output)")
            #expect(second.stderr.contains("\(target) is being written by another salvage (pid \(holder))"), "\(second.stderr)")
            #expect(ChildProcesses.within(seconds: 60) { !first.isRunning })
            #expect(first.terminationReason == .exit && first.terminationStatus == 0)
            let verified = try store.run(["verify", "--store", target])
            #expect(verified.status == 0 && verified.stdout.contains("2900 records verified, 0 problems"), "\(verified.output)")
        }
    }

    /// An output the new store cannot be in is refused before anything is copied: open to others (77, as the new
    /// store would be refused at the end), the store itself or inside it (64).
    @Test func anOutputTheNewStoreCannotBeInIsRefusedBeforeAnythingIsCopied() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let open = store.root + "/open"
            #expect(mkdir(open, 0o700) == 0 && chmod(open, 0o777) == 0)
            let refused = try store.run(["salvage", "-o", open])
            #expect(refused.status == 77 && refused.stderr.contains("mode 0777") && refused.stderr.contains("chmod 700"), "\(refused.output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: open).isEmpty, "refused only after copying")
            for inside in [store.directory, store.directory + "/salvaged"] {
                let run = try store.run(["salvage", "-o", inside])
                #expect(run.status == 64 && run.stderr.contains("store"), "\(inside): \(run.output)")
            }
            #expect(!FileManager.default.fileExists(atPath: store.directory + "/salvaged"))
        }
    }
}
