import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing
import TokenCache

/// Runs the built `cachetool` as a child process, so that a crash shows up as a signal instead of killing
/// the test runner, and so that what a user sees (stdout, stderr, exit code) is what is tested.
struct CacheToolRun {
    let stdout: String
    let stderr: String
    let status: Int32
    let exitedNormally: Bool

    var output: String { stdout + stderr }
}

enum CacheTool {
    static let binary: URL = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for directory in candidates {
            let url = directory.appendingPathComponent("cachetool")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return candidates[0].appendingPathComponent("cachetool")
    }()

    /// The sanitizer settings of this test run (`make sanitize`), passed on to every `cachetool` child.
    static let sanitizerOptions = ProcessInfo.processInfo.environment.filter {
        ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"].contains($0.key)
    }

    /// Runs `cachetool arguments…` with `environment` added to a minimal environment (no inherited secrets).
    @discardableResult
    static func run(
        _ arguments: [String], environment: [String: String] = [:], shell: String? = nil, stdin: String? = nil
    ) throws -> CacheToolRun {
        let process = Process()
        if let shell {
            // For umask and the like: `sh -c '<shell> "$0" "$@"' cachetool args…`
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\(shell); exec \"$0\" \"$@\"", binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        var base = ["PATH": "/usr/bin:/bin", "HOME": FileManager.default.temporaryDirectory.path]
        base.merge(sanitizerOptions) { $1 }
        base.merge(environment) { $1 }
        process.environment = base
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        if let input { process.standardInput = input }
        try process.run()
        if let input, let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CacheToolRun(
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
            status: process.terminationStatus, exitedNormally: process.terminationReason == .exit
        )
    }
}

/// A temporary store location and the environment that points cachetool at it.
struct CLIStore {
    let root: String
    var directory: String { root + "/store" }
    var keyFile: String { root + "/config/key" }
    var environment: [String: String] { ["TOKEN_CACHE_DIR": directory, "TOKEN_CACHE_KEY_FILE": keyFile] }
    var configuration: Configuration { Configuration(directory: directory, keySource: .keyFile(path: keyFile)) }
    /// The whole environment of a `cachetool` child started by hand: minimal, this run's sanitizer settings, the store.
    var processEnvironment: [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": root].merging(CacheTool.sanitizerOptions) { $1 }.merging(environment) { $1 }
    }

    static func with(_ body: (CLIStore) throws -> Void) throws {
        try withTemporaryDirectory(prefix: "tc-cli") { root in try body(CLIStore(root: root)) }
    }

    func run(_ arguments: [String], extra: [String: String] = [:], shell: String? = nil) throws -> CacheToolRun {
        try CacheTool.run(arguments, environment: environment.merging(extra) { $1 }, shell: shell)
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }
}

extension CLIStore {
    /// Runs `cachetool arguments` and SIGKILLs it a random moment (up to `jitter` seconds) after it committed
    /// `commits` write transactions (LMDB's newest meta page moved on that far), so that the kill lands inside a
    /// long operation however slow this machine is right now; or lets it finish when it finishes first.
    func runKilled(_ arguments: [String], afterCommits commits: UInt64, jitter: Double) throws {
        let process = Process()
        process.executableURL = CacheTool.binary
        process.arguments = arguments
        process.environment = processEnvironment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let committed = try LMDBDataFile.newestTransactionID(of: self)
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while try LMDBDataFile.newestTransactionID(of: self) < committed + commits, process.isRunning, Date() < deadline { usleep(1_000) }
        Thread.sleep(forTimeInterval: Double.random(in: 0...jitter))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A store's `data.mdb` as bytes, for tests that read LMDB's own fields or damage them. LMDB 0.9 on 64-bit Linux:
/// 4096-byte pages, meta pages 0 and 1, each a 16-byte page header then `MDB_meta`, whose main database's root page
/// number is at page offset 128 and transaction id at 144; fields are little-endian.
struct LMDBDataFile {
    static let pageSize = 4096
    let path: String
    var bytes: [UInt8]

    init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
    }

    init(store: CLIStore) throws {
        path = store.directory + "/data.mdb"
        bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func u64(at offset: Int) -> UInt64 {
        bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func setU64(_ value: UInt64, at offset: Int) {
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    /// Byte offset of meta page `page`'s transaction id.
    static func transactionIDOffset(ofMetaPage page: Int) -> Int { page * pageSize + 144 }

    var metaTransactionIDs: (page0: UInt64, page1: UInt64) {
        (u64(at: Self.transactionIDOffset(ofMetaPage: 0)), u64(at: Self.transactionIDOffset(ofMetaPage: 1)))
    }

    /// The newer meta page's transaction id, which grows by one with every commit; reads only the two meta pages, so
    /// that a test can poll it while another process writes.
    static func newestTransactionID(of store: CLIStore) throws -> UInt64 {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: store.directory + "/data.mdb"))
        defer { try? handle.close() }
        let head = LMDBDataFile(path: store.directory + "/data.mdb", bytes: [UInt8](try handle.read(upToCount: 2 * pageSize) ?? Data()))
        return max(head.metaTransactionIDs.page0, head.metaTransactionIDs.page1)
    }

    /// The meta page LMDB opens: the one with the larger transaction id.
    var newestMetaPage: Int { metaTransactionIDs.page0 > metaTransactionIDs.page1 ? 0 : 1 }

    func write() throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

/// A shared library built here from C source, for `LD_PRELOAD` into `cachetool`: to stall or crash it at a chosen point.
enum PreloadShim {
    /// Builds `source` as `<directory>/<name>.so` with the first C compiler found (the Swift toolchain always brings
    /// clang) and returns its path.
    static func build(_ source: String, named name: String, in directory: String) throws -> String {
        let sourcePath = directory + "/\(name).c", library = directory + "/\(name).so"
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/opt/swift/usr/bin"
        let compiler = try #require(
            ["cc", "clang", "gcc"].lazy.flatMap { name in searchPath.split(separator: ":").map { "\($0)/\(name)" } }
                .first { FileManager.default.isExecutableFile(atPath: $0) },
            "no C compiler on PATH to build the LD_PRELOAD shim"
        )
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = ["-shared", "-fPIC", "-O2", "-o", library, sourcePath, "-ldl"]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(compiler) failed to build the shim")
        return library
    }
}
