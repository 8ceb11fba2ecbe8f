import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A crashing `cachetool` prints one fixed line, never the Swift backtracer's report, whose register section
/// dumps the memory the registers point at (decrypted token bytes were seen there).
@Suite struct CrashReportTests {
    @Test(arguments: [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE])
    func aCrashPrintsOneLineAndNoMemory(signal: Int32) throws {
        try CLIStore.with { store in
            let process = Process()
            process.executableURL = CacheTool.binary
            process.arguments = ["ingest", "--client-id", "c", "--authority", "https://login.microsoftonline.com/t", "--scopes", "s", "-"]
            process.environment = store.processEnvironment
            let input = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            let pid = process.processIdentifier
            let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }  // never hang the suite
            DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: watchdog)
            // The process holds a token in memory while it waits for the rest of its input.
            input.fileHandleForWriting.write(Data(#"{"access_token":"AT-CANARY-CRASH-7731","refresh_token":"RT-CANARY-CRASH-7732","#.utf8))
            usleep(400_000)
            #expect(kill(process.processIdentifier, signal) == 0)
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            watchdog.cancel()
            try? input.fileHandleForWriting.close()

            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal, "\(stderr)")
            #expect(stderr == "cachetool: crashed with signal \(signal); no crash report was written, because it could contain secrets\n")
            for leak in ["CANARY", "Registers", "Backtrac", "crashed:", "access_token"] {
                #expect(!stderr.contains(leak), "\(leak) in the crash output")
            }
        }
    }
}
