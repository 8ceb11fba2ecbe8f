import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// An opener SIGKILLed inside `mdb_env_open`, right after it took LMDB's exclusive lock and reset the lock table,
/// while a writer waits to open the same store: the writer must neither lose the newest acknowledged write nor fail.
///
/// The opener is stalled there by an `LD_PRELOAD` shim (compiled here from the C source below) that pauses the
/// process after LMDB reads the second meta page, which `mdb_env_open` does after initialising the lock table and
/// before publishing the newest transaction id into it.
@Suite(.serialized) struct KilledOpenerTests {
    private static let stallShimSource = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <sys/types.h>
        #include <unistd.h>
        /* Pauses forever after the pread of meta page 1 of data.mdb, once $TC_TEST_STALL_MARKER is created. */
        static int is_data_file(int fd) {
            char link[64], target[4096];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n <= 9) return 0;
            target[n] = 0;
            return strcmp(target + n - 9, "/data.mdb") == 0;
        }
        ssize_t pread64(int fd, void *buf, size_t count, off_t offset) {
            static ssize_t (*real)(int, void *, size_t, off_t) = 0;
            if (!real) real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
            ssize_t rc = real(fd, buf, count, offset);
            const char *marker = getenv("TC_TEST_STALL_MARKER");
            if (marker && offset == 4096 && count < 8192 && is_data_file(fd)) {
                close(open(marker, O_WRONLY | O_CREAT, 0600));
                for (;;) pause();
            }
            return rc;
        }
        ssize_t pread(int fd, void *buf, size_t count, off_t offset) { return pread64(fd, buf, count, offset); }
        """#

    private static func response(_ index: Int) -> String {
        let clientInfo = Data(#"{"uid":"u\#(index)","utid":"t"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        return #"{"access_token":"AT-\#(index)","token_type":"Bearer","expires_in":86400,"scope":"s\#(index)","refresh_token":"RT-\#(index)","client_info":"\#(clientInfo)"}"#
    }

    private static func ingestArguments(_ index: Int) -> [String] {
        ["ingest", "--client-id", "c", "--authority", "https://login.microsoftonline.com/t", "--scopes", "s\(index)", "-"]
    }

    private static func start(_ arguments: [String], store: CLIStore, extra: [String: String] = [:], stdin: String? = nil)
        throws -> Process
    {
        let process = Process()
        process.executableURL = CacheTool.binary
        process.arguments = arguments
        process.environment = store.processEnvironment.merging(extra) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        return process
    }

    private static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        return !process.isRunning
    }

    @Test func aWriterWaitingBehindAKilledOpenerKeepsTheNewestWriteAndSucceeds() throws {
        try CLIStore.with { store in
            let shim = try PreloadShim.build(Self.stallShimSource, named: "stall", in: store.root)
            #expect(try store.run(["init"]).status == 0)
            // Acknowledged writes until the newest commit sits in meta page 1, the page a write from a reset table
            // would overwrite.
            var index = 0
            var ids: (page0: UInt64, page1: UInt64)
            repeat {
                index += 1
                let run = try CacheTool.run(Self.ingestArguments(index), environment: store.environment, stdin: Self.response(index))
                try #require(run.status == 0, "\(run.output)")
                ids = try LMDBDataFile(store: store).metaTransactionIDs
            } while ids.page1 <= ids.page0
            let newestBefore = ids.page1
            let lastAcknowledged = index

            let marker = store.root + "/stalled"
            let opener = try Self.start(["info"], store: store, extra: ["LD_PRELOAD": shim, "TC_TEST_STALL_MARKER": marker])
            defer { if opener.isRunning { kill(opener.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: marker), Date() < deadline, opener.isRunning { usleep(10_000) }
            try #require(FileManager.default.fileExists(atPath: marker), "the opener never reached the stall point")

            let writer = try Self.start(Self.ingestArguments(999), store: store, stdin: Self.response(999))
            defer { if writer.isRunning { kill(writer.processIdentifier, SIGKILL) } }
            usleep(500_000)
            #expect(writer.isRunning, "the writer did not wait for the stalled opener")

            kill(opener.processIdentifier, SIGKILL)
            opener.waitUntilExit()
            try #require(Self.waitForExit(writer, seconds: 30), "the writer hung")
            #expect(writer.terminationReason == .exit && writer.terminationStatus == 0)

            let after = try LMDBDataFile(store: store).metaTransactionIDs
            #expect(max(after.page0, after.page1) > newestBefore, "the newest transaction id stepped back: \(after)")
            let dump = try store.run(["inspect", "--json", "--reveal-secrets"])
            #expect(dump.status == 0, "\(dump.output)")
            #expect(dump.stdout.contains("\"AT-\(lastAcknowledged)\""), "the last acknowledged write before the kill was lost")
            #expect(dump.stdout.contains("\"AT-999\""), "the write that waited behind the killed opener is missing")
        }
    }
}
