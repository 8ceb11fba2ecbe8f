import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A crashing `cachetool` prints one fixed line, never the Swift backtracer's report, whose register section
/// dumps the memory the registers point at (decrypted token bytes were seen there).
@Suite struct CrashReportTests {
    /// Crashes `cachetool` before `main`: in a library initialiser that runs before the Swift runtime's (the shim's
    /// own, `TC_TEST_CRASH_AT=initialiser`), or after every initialiser, just before `main` is called
    /// (`TC_TEST_CRASH_AT=main`, by wrapping `__libc_start_main`'s `main`).
    private static let earlyCrashShimSource = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <signal.h>
        #include <stdlib.h>
        #include <string.h>
        typedef int (*main_function)(int, char **, char **);
        static main_function real_main;
        static int crashing_main(int argc, char **argv, char **envp) {
            raise(SIGSEGV);
            return real_main(argc, argv, envp);
        }
        __attribute__((constructor)) static void crash_in_initialiser(void) {
            const char *at = getenv("TC_TEST_CRASH_AT");
            if (at && strcmp(at, "initialiser") == 0) raise(SIGSEGV);
        }
        int __libc_start_main(main_function main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                              void (*rtld_fini)(void), void *stack_end) {
            int (*real)(main_function, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
                (int (*)(main_function, int, char **, void (*)(void), void (*)(void), void (*)(void), void *))dlsym(RTLD_NEXT, "__libc_start_main");
            const char *at = getenv("TC_TEST_CRASH_AT");
            real_main = main;
            return real(at && strcmp(at, "main") == 0 ? crashing_main : main, argc, argv, init, fini, rtld_fini, stack_end);
        }
        """#

    @Test(arguments: ["initialiser", "main"])
    func aCrashBeforeMainPrintsOneLineToo(at point: String) throws {
        try CLIStore.with { store in
            let shim = try PreloadShim.build(Self.earlyCrashShimSource, named: "early-crash", in: store.root)
            let process = Process()
            process.executableURL = CacheTool.binary
            process.arguments = ["info"]
            // The key in the environment, where a report's memory dump of a register could show it.
            process.environment = store.processEnvironment.merging([
                "LD_PRELOAD": shim, "TC_TEST_CRASH_AT": point, "TOKEN_CACHE_KEY": "Q0FOQVJZLUVOVi1LRVktMDAwMDAwMDAwMDAwMDAwMDA=",
                // The backtracer asked for explicitly: the handler installed before the runtime's initialiser still wins.
                "SWIFT_BACKTRACE": "enable=yes",
            ]) { $1 }
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGSEGV, "\(stderr)")
            #expect(stderr == "cachetool: crashed with signal \(SIGSEGV); no crash report was written, because it could contain secrets\n")
            for leak in ["Q0FOQVJZ", "Registers", "Backtrac", "crashed:"] {
                #expect(!stderr.contains(leak), "\(leak) in the crash output")
            }
        }
    }

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
