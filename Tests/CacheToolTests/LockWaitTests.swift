import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every wait on another process is bounded: a process stopped (Ctrl-Z, `SIGSTOP`) while it holds the store's open
/// lock (an opener inside `mdb_env_open`, a compaction) or its writer lock (a writer inside its transaction) makes
/// the others fail with exit 75 within `TOKEN_CACHE_LOCK_TIMEOUT`, naming it, instead of hanging.
@Suite struct LockWaitTests {
    /// A process that takes the exclusive `flock` on `path` and then stops itself with SIGSTOP, as a holder stopped
    /// by Ctrl-Z does. Returns once it holds the lock and is stopped; `body` runs while it is; it is killed after.
    private func withStoppedHolder(of path: String, _ body: (Int32) throws -> Void) throws {
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            "import fcntl, os, signal, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); os.kill(os.getpid(), signal.SIGSTOP)",
            path,
        ]
        try holder.run()
        defer {
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
        Self.waitUntilStopped(holder.processIdentifier)
        try body(holder.processIdentifier)
    }

    /// Returns once process `pid` is stopped (`/proc/<pid>/stat`'s state is T), or after 30 s.
    private static func waitUntilStopped(_ pid: Int32) {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if stat.split(separator: ")").last?.split(separator: " ").first == "T" { return }
            usleep(10_000)
        }
    }

    private func timed(_ body: () throws -> CacheToolRun) rethrows -> (CacheToolRun, TimeInterval) {
        let start = Date()
        let run = try body()
        return (run, Date().timeIntervalSince(start))
    }

    @Test func aStoppedWriterMakesOtherWritersFailWith75NamingItNotHang() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)  // the first write creates writer.lock, mode 0600
            try withStoppedHolder(of: store.directory + "/writer.lock") { pid in
                let (run, seconds) = timed {
                    (try? store.run(["purge-expired"], extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "1"])) ?? CacheToolRun(stdout: "", stderr: "", status: -1, exitedNormally: false)
                }
                #expect(run.status == 75, "\(run.output)")
                #expect(run.stderr.contains("writer lock") && run.stderr.contains("process \(pid) (") && run.stderr.contains("python3"), "\(run.stderr)")
                #expect(run.stderr.contains("SIGSTOP"))
                #expect(seconds < 15, "waited \(seconds) s for a bound of 1 s")
                // Reads do not wait for writers.
                let inspect = try store.run(["inspect"], extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "1"])
                #expect(inspect.status == 0, "\(inspect.output)")
            }
            // Once the holder is gone, writes go through.
            #expect(try store.run(["purge-expired"]).status == 0)
        }
    }

    /// Stops `cachetool` inside its first `mdb_put`: a writer inside its transaction, holding LMDB's writer mutex and
    /// the writer lock, as Ctrl-Z leaves it.
    private static let stopInsideWriteShim = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <signal.h>
        #include <stdlib.h>
        typedef struct MDB_txn MDB_txn;
        typedef unsigned int MDB_dbi;
        typedef struct MDB_val MDB_val;
        int mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned int flags) {
            static int (*real)(MDB_txn *, MDB_dbi, MDB_val *, MDB_val *, unsigned int) = 0;
            static int stopped = 0;
            if (!real) real = (int (*)(MDB_txn *, MDB_dbi, MDB_val *, MDB_val *, unsigned int))dlsym(RTLD_NEXT, "mdb_put");
            if (!stopped && getenv("TC_TEST_STOP_IN_WRITE")) { stopped = 1; raise(SIGSTOP); }
            return real(txn, dbi, key, data, flags);
        }
        """#

    @Test func aWriterStoppedInsideItsTransactionMakesWritableOpensAndWritesFail75() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let shim = try PreloadShim.build(Self.stopInsideWriteShim, named: "stop-in-write", in: store.root)
            let writer = Process()
            writer.executableURL = CacheTool.binary
            writer.arguments = ["cap", "--access-tokens", "100"]
            writer.environment = store.processEnvironment.merging(["LD_PRELOAD": shim, "TC_TEST_STOP_IN_WRITE": "1"]) { $1 }
            writer.standardOutput = FileHandle.nullDevice
            writer.standardError = FileHandle.nullDevice
            try writer.run()
            defer {
                kill(writer.processIdentifier, SIGKILL)
                writer.waitUntilExit()
            }
            Self.waitUntilStopped(writer.processIdentifier)
            for verb in [["purge-expired"], ["sample-data"]] {
                // Under a watchdog (`timeout`): a wait without a bound would hang the suite; it exits 124 instead.
                let (run, seconds) = timed {
                    (try? store.run(verb, extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "1"], shell: "exec /usr/bin/timeout -s KILL 20 \"$0\" \"$@\"; :"))
                        ?? CacheToolRun(stdout: "", stderr: "", status: -1, exitedNormally: false)
                }
                #expect(run.status == 75, "\(verb): \(run.output)")
                #expect(run.stderr.contains("writer lock") && run.stderr.contains("process \(writer.processIdentifier)"), "\(verb): \(run.stderr)")
                #expect(seconds < 15, "\(verb) waited \(seconds) s for a bound of 1 s")
            }
            #expect(try store.run(["inspect"], extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "1"]).status == 0)
        }
    }

    @Test func aStoppedOpenerOrCompactionMakesOthersFailWith75NamingItNotHang() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try withStoppedHolder(of: store.directory + "/open.lock") { pid in
                for verb in [["inspect"], ["info"], ["sample-data"], ["compact"]] {
                    let (run, seconds) = timed {
                        (try? store.run(verb, extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "0.5"])) ?? CacheToolRun(stdout: "", stderr: "", status: -1, exitedNormally: false)
                    }
                    #expect(run.status == 75, "\(verb): \(run.output)")
                    #expect(run.stderr.contains("open lock") && run.stderr.contains("process \(pid)"), "\(verb): \(run.stderr)")
                    #expect(seconds < 15, "\(verb) waited \(seconds) s for a bound of 0.5 s")
                }
            }
            #expect(try store.run(["inspect"]).status == 0)
        }
    }
}
