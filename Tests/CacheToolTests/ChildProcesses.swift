import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What tests of `cachetool`'s contained child need to know about processes, from `/proc`: a process's children,
/// and whether it has ended. Every wait is bounded.
enum ChildProcesses {
    /// The state letter and parent pid in `/proc/<pid>/stat`, or nil when there is no such process.
    static func status(_ pid: pid_t) -> (state: Character, parent: pid_t)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After the command name in parentheses (which may hold spaces): state, then the parent pid.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 1, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        return (state, parent)
    }

    /// The processes whose parent is `pid`.
    static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { status($0)?.parent == pid && status($0)?.state != "Z" }
    }

    /// Whether `pid` has ended (gone, or a zombie its new parent has not reaped yet).
    static func hasEnded(_ pid: pid_t) -> Bool {
        guard let status = status(pid) else { return true }
        return status.state == "Z" || status.state == "X"
    }

    /// Ends a test's `cachetool` and its contained child, whatever state the test left them in: SIGKILL to each still
    /// running, then the parent reaped.
    static func endBoth(child: pid_t, parent: Process) {
        if !hasEnded(child) { kill(child, SIGKILL) }
        if parent.isRunning { kill(parent.processIdentifier, SIGKILL) }
        parent.waitUntilExit()
    }

    /// Polls `condition` every 10 ms for at most `seconds`; whether it held.
    static func within(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// The one child `cachetool` started to do its work (`CrashContainment`), waited for up to `seconds`.
    static func containedChild(of parent: Process, seconds: Double = 20) throws -> pid_t {
        var found: [pid_t] = []
        _ = within(seconds: seconds) {
            found = children(of: parent.processIdentifier)
            return !found.isEmpty || !parent.isRunning
        }
        return try #require(found.first, "cachetool (pid \(parent.processIdentifier)) started no child")
    }
}
