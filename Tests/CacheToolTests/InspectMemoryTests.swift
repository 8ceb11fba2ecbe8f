import Foundation
import Testing
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

/// `inspect` reads a store record by record: its peak memory does not grow with the store. Measured as the peak
/// resident set of the `cachetool` process and its worker child (`wait4` reports the larger), mapped store pages
/// included, on two stores eight times apart in size. (`make stress` repeats this on a million access tokens against a 64 MiB bound.)
@Suite(.serialized) struct InspectMemoryTests {
    /// Peak resident memory, in bytes, of `cachetool arguments…` with its output sent to /dev/null, and its exit code.
    ///
    /// Measured by a small Python parent (`fork`, `exec`, `wait4`): a child spawned from this test process directly
    /// would report this process's own peak, because Linux records the peak of the address space a child replaces at
    /// `exec`, and `posix_spawn` children start in their parent's.
    static func peakResidentBytes(_ arguments: [String], environment: [String: String]) throws -> (Int, Int32) {
        let script = """
            import os, sys
            pid = os.fork()
            if pid == 0:
                fd = os.open("/dev/null", os.O_WRONLY)
                os.dup2(fd, 1)
                os.execv(sys.argv[1], sys.argv[1:])
            _, status, usage = os.wait4(pid, 0)
            print(usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, CacheTool.binary.path] + arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = text.split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        try #require(fields.count == 2, "\(text)")
        return (fields[0], Int32(fields[1]))
    }

    @Test func peakMemoryDoesNotGrowWithTheStore() throws {
        var peaks: [String: [Int]] = [:]
        for tokens in [4_000, 32_000] {
            try CLIStore.with { store in
                #expect(try store.run(["init"]).status == 0)
                let cache = try TokenStore.open(store.configuration)
                try SyntheticPopulation(accessTokens: tokens).populate(cache, recordsPerTransaction: 20_000, layout: .keyOrdered)
                if tokens == 32_000 { try progressIsShownOnATerminal(store) }
                for view in [["inspect"], ["inspect", "--json"], ["inspect", "--summary"]] {
                    let (bytes, status) = try Self.peakResidentBytes(view, environment: store.processEnvironment)
                    #expect(status == 0, "\(view)")
                    peaks[view.joined(separator: " "), default: []].append(bytes)
                }
            }
        }
        for (view, sizes) in peaks {
            let (small, large) = (sizes[0], sizes[1])
            // The larger store holds eight times the records (73,600 against 9,200); memory in proportion would add
            // tens of MiB, bounded memory adds little.
            #expect(large - small < 12 << 20, "\(view): \(small >> 20) MiB at 4k tokens, \(large >> 20) MiB at 32k")
            #expect(large < 64 << 20, "\(view): \(large >> 20) MiB")
        }
    }

    /// Work that takes more than a second shows how far it is on a terminal (standard error on a pseudo-terminal from
    /// util-linux `script`, the output going to a file), and leaves the line clean when it ends.
    func progressIsShownOnATerminal(_ store: CLIStore) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        let command = "'\(CacheTool.binary.path)' inspect --json > '\(store.root)/out.json'"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = store.processEnvironment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("reading ") && text.contains("/73,604 records ("), "\(text)")
        #expect(text.hasSuffix("\r\u{1B}[K"), "the bar is cleared at the end")
        // Into a pipe, no bar.
        let piped = try store.run(["inspect", "--json"])
        #expect(piped.status == 0 && piped.stderr.isEmpty)
    }
}
