import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// `inspect` reads in a child process (crash containment); the child ends with its parent. Ctrl-C (SIGINT to the
/// terminal's foreground process group) and a SIGINT sent to the parent alone stop both, the parent by the same
/// signal; a parent killed by SIGKILL takes its child along. Each `inspect` writes into a pipe nobody reads, so that
/// its child blocks there, alive, until something ends it.
@Suite struct ContainedChildTests {
    /// A store whose `inspect --output wide` is far longer than a pipe holds (64 KiB).
    static func seeded(_ store: CLIStore) throws {
        #expect(try store.run(["init"]).status == 0)
        try TokenStore.open(store.configuration).write { writer in
            for index in 0..<1_500 {
                try writer.put(AccessToken(
                    homeAccountID: "user-\(index).tenant", environment: "login.microsoftonline.com", clientID: "client", realm: "tenant",
                    target: "scope.read", secret: Secret("AT-\(index)"), cachedAt: 1_800_000_000, expiresOn: 4_000_000_000
                ))
            }
        }
    }

    /// Runs `body` while `cachetool inspect --output wide` runs in a process group of its own (Foundation's `Process`
    /// makes one), with its child blocked writing into a pipe that is never read; kills what is left afterwards.
    static func whileInspecting(_ body: (_ parent: Process, _ child: pid_t) throws -> Void) throws {
        try CLIStore.with { store in
            try seeded(store)
            let output = Pipe()
            let parent = Process()
            parent.executableURL = CacheTool.binary
            parent.arguments = ["inspect", "--output", "wide"]
            parent.environment = store.processEnvironment
            parent.standardOutput = output
            parent.standardError = FileHandle.nullDevice
            try parent.run()
            let child = try ChildProcesses.containedChild(of: parent)
            defer {
                ChildProcesses.endBoth(child: child, parent: parent)
                try? output.fileHandleForReading.close()
            }
            #expect(ChildProcesses.within(seconds: 10) { ChildProcesses.status(child)?.state == "S" }, "the child is not waiting on its output")
            try body(parent, child)
        }
    }

    enum Stop: CaseIterable {
        /// Ctrl-C: SIGINT to the whole process group.
        case interruptFromTheTerminal
        /// SIGINT to the parent alone (`kill -INT PID`).
        case interruptTheParent
        /// SIGKILL to the parent alone (`kill -9 PID`, the OOM killer).
        case killTheParent
    }

    @Test(arguments: Stop.allCases)
    func stoppingInspectStopsItsChild(stop: Stop) throws {
        try Self.whileInspecting { parent, child in
            switch stop {
            case .interruptFromTheTerminal: #expect(kill(-parent.processIdentifier, SIGINT) == 0)
            case .interruptTheParent: #expect(kill(parent.processIdentifier, SIGINT) == 0)
            case .killTheParent: #expect(kill(parent.processIdentifier, SIGKILL) == 0)
            }
            #expect(ChildProcesses.within(seconds: 5) { ChildProcesses.hasEnded(child) }, "\(stop): the child (pid \(child)) outlived the stop")
            #expect(ChildProcesses.within(seconds: 5) { !parent.isRunning }, "\(stop): the parent did not end")
            guard !parent.isRunning else { return }
            let signal = stop == .killTheParent ? SIGKILL : SIGINT
            #expect(parent.terminationReason == .uncaughtSignal && parent.terminationStatus == signal,
                    "\(stop): the parent ended with \(parent.terminationReason) \(parent.terminationStatus)")
        }
    }

    /// Ctrl-Z stops the child with its parent, and `fg` (SIGCONT) resumes both: the child is in its parent's process
    /// group, where the terminal's signals reach it. (SIGSTOP to the group stands for the terminal's SIGTSTP, which the
    /// signal mask a test thread passes on blocks.)
    @Test func suspendingInspectFromTheTerminalSuspendsItsChild() throws {
        try Self.whileInspecting { parent, child in
            #expect(kill(-parent.processIdentifier, SIGSTOP) == 0)
            #expect(ChildProcesses.within(seconds: 5) { ChildProcesses.status(child)?.state == "T" }, "the child went on while its parent was stopped")
            // SIGSTOP to a group reaches its processes one by one: the parent may be seen running a moment longer.
            #expect(ChildProcesses.within(seconds: 5) { ChildProcesses.status(parent.processIdentifier)?.state == "T" }, "the parent did not stop")
            #expect(kill(-parent.processIdentifier, SIGCONT) == 0)
            #expect(ChildProcesses.within(seconds: 5) { ChildProcesses.status(child)?.state == "S" })
        }
    }
}
