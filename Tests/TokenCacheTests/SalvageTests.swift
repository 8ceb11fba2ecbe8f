import Foundation
import Testing
import TokenCacheStorage
import TokenCacheRecords

@testable import TokenCache
@testable import TokenCacheOperations

/// Copying what can still be read out of a damaged store: every readable record, sealed as it was, into a store the
/// same key opens; damaged records left; a range a crash happened in skipped when the salvage is run again.
@Suite struct SalvageTests {
    static func populate(_ cache: TokenStore) throws {
        try cache.write { writer in
            for index in 0..<600 {
                try writer.put(Samples.accessToken(home: "u\(index).utid", secret: "at-\(index)"))
                try writer.put(Samples.refreshToken(home: "u\(index).utid", secret: "rt-\(index)"))
            }
            try writer.put(Samples.account())
            try writer.put(Samples.appMetadata())
        }
        try cache.setAccessTokenCap(5_000)
    }

    static func configuration(_ store: TestStore, _ directory: String) -> Configuration {
        Configuration(directory: directory, keySource: .keyFile(path: store.keyFile))
    }

    @Test func aWholeStoreIsCopiedSealedAsItWasAndTheSameKeyOpensIt() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let before = try DataKeyRotationTests.contents(store.configuration)
            let target = store.root + "/salvaged"
            let report = try TokenStore.salvage(store.configuration, into: target)
            #expect(report.salvaged == [.accessToken: 600, .refreshToken: 600, .account: 1, .idToken: 0, .appMetadata: 1])
            #expect(report.damagedRecords == 0 && report.unreadableRanges == 0 && !report.resumed)
            DataKeyRotationTests.expectSame(try DataKeyRotationTests.contents(Self.configuration(store, target)), before)
            #expect(try TokenStore.open(Self.configuration(store, target)).verify().isClean)
            #expect(!FileManager.default.fileExists(atPath: target + "/" + SalvageProgress.fileName))
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: target) } == .storeAlreadyExists, "a finished salvage is there")
        }
    }

    @Test func aDamagedRecordIsLeftBehind() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            var (key, value) = try #require(try store.rawEntries(KeySpace.refreshTokens).first)
            value[value.count - 1] ^= 1
            try store.rawPut(KeySpace.refreshTokens, key: key, value: value)
            let target = store.root + "/salvaged"
            let report = try TokenStore.salvage(store.configuration, into: target)
            #expect(report.damagedRecords == 1 && report.salvaged[.refreshToken] == 599)
            #expect(try TokenStore.open(Self.configuration(store, target)).verify().isClean)
        }
    }

    /// Writes the progress an earlier salvage into `target` left: every record uncommitted, reading access-token range
    /// `reading`, whether it crashed there, and that 3 ranges and 2 damaged records were lost before. Returns that
    /// range's access tokens.
    static func unfinishedSalvage(_ store: TestStore, into target: String, crashed: Bool) throws -> (reading: Int, inRange: Int) {
        let accessTokens = try store.rawEntries(KeySpace.accessTokens)
        let reading = Int(accessTokens[10].0[0]) << 8 | Int(accessTokens[10].0[1])
        let inRange = accessTokens.filter { Int($0.0[0]) << 8 | Int($0.0[1]) == reading }.count
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let database = try #require(KeySpace.allCases.firstIndex(of: KeySpace.accessTokens))
        var progress = SalvageProgress(committed: (0, 0), reading: (database, reading), crashed: crashed)
        progress.unreadableRanges = 3
        progress.damagedRecords = 2
        try Data(progress.bytes).write(to: URL(fileURLWithPath: target + "/" + SalvageProgress.fileName))
        return (reading, inRange)
    }

    /// What a salvage that crashed while reading one range leaves, the crash recorded by whoever saw it: run again,
    /// it skips that range and copies the rest.
    @Test func aSalvageRunAgainAfterARecordedCrashSkipsTheRangeThatCrashedIt() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let target = store.root + "/salvaged"
            let (_, inRange) = try Self.unfinishedSalvage(store, into: target, crashed: false)
            #expect(try TokenStore.recordSalvageCrash(in: target))
            let report = try TokenStore.salvage(store.configuration, into: target)
            #expect(report.resumed && report.unreadableRanges == 3 + 1 && report.damagedRecords == 2)
            #expect(report.salvaged[.accessToken] == 600 - inRange && report.salvaged[.refreshToken] == 600)
            #expect(try TokenStore.open(Self.configuration(store, target)).verify().isClean)
        }
    }

    /// A salvage that ended while reading a range for any other reason (killed, interrupted, the machine lost) reads
    /// that range again: a kill is no damage, and skipping the range lost its records.
    @Test func aSalvageRunAgainAfterAKillReadsTheRangeAgainAndLosesNothing() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let target = store.root + "/salvaged"
            _ = try Self.unfinishedSalvage(store, into: target, crashed: false)
            let report = try TokenStore.salvage(store.configuration, into: target)
            #expect(report.resumed && report.unreadableRanges == 3 && report.damagedRecords == 2, "what was lost before, nothing more")
            #expect(report.salvaged == [.accessToken: 600, .refreshToken: 600, .account: 1, .idToken: 0, .appMetadata: 1])
        }
    }

    /// What a salvage lost before it was stopped is still in the report of the run that finishes it.
    @Test func theProgressFileKeepsTheCrashAndWhatWasLostAndReadsAnEarlierVersionsFile() throws {
        var progress = SalvageProgress(committed: (2, 300), reading: (2, 301), skipped: (2, 290, 8), crashed: true)
        progress.unreadableRanges = 9
        progress.damagedRecords = 4
        let read = try #require(SalvageProgress(progress.bytes))
        #expect(read.crashedIn.map { [$0.database, $0.prefix] } == [2, 301] && read.unreadableRanges == 9 && read.damagedRecords == 4)
        #expect(read.skipped.map { [$0.database, $0.prefix, $0.count] } == [2, 290, 8])
        // Seven numbers, without the crash: read again, never skipped.
        let earlier = try #require(SalvageProgress(Array(progress.bytes.prefix(28))))
        #expect(earlier.reading != nil && earlier.crashedIn == nil && earlier.unreadableRanges == 0)
        #expect(SalvageProgress(Array(progress.bytes.prefix(30))) == nil)
    }

    /// A second salvage into a directory a salvage is writing meets its lock at once, named by pid, and writes nothing.
    @Test func aSecondSalvageIntoTheSameDirectoryIsRefusedNamingTheFirst() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let target = store.root + "/salvaged"
            var second: TokenCacheError?
            let report = try TokenStore.salvage(store.configuration, into: target) { _ in
                guard second == nil else { return }
                do { _ = try TokenStore.salvage(store.configuration, into: target) } catch let error as TokenCacheError { second = error } catch {}
            }
            #expect(second?.code == .storeInUse && second?.description.contains("another salvage (pid \(getpid()))") == true, "\(String(describing: second))")
            #expect(report.salvaged[.accessToken] == 600 && report.unreadableRanges == 0)
            #expect(!FileManager.default.fileExists(atPath: target + "/" + SalvageLock.fileName), "the lock file is removed at the end")
            #expect(errorCode { try TokenStore.recordSalvageCrash(in: target) } == nil)
        }
    }

    /// The target directory is checked before anything is written: the store itself, inside it, a file, open to
    /// others, not empty.
    @Test func aTargetThatCannotHoldTheSalvageIsRefusedBeforeAnythingIsWritten() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let open = store.root + "/open"
            #expect(mkdir(open, 0o700) == 0 && chmod(open, 0o777) == 0)
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: open) } == .insecurePermissions)
            #expect(try FileManager.default.contentsOfDirectory(atPath: open).isEmpty)
            let storeFiles = try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: store.directory) } == .invalidArgument)
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: store.directory + "/../store/copy") } == .invalidArgument)
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted() == storeFiles)
            #expect(FileManager.default.createFile(atPath: store.root + "/file", contents: Data()))
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: store.root + "/file") } == .invalidArgument)
            let other = store.root + "/other"
            #expect(mkdir(other, 0o700) == 0 && FileManager.default.createFile(atPath: other + "/note", contents: Data()))
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: other) } == .invalidArgument)
            #expect(try FileManager.default.contentsOfDirectory(atPath: other) == ["note"])
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: store.root + "/new/deeper") } == nil)
        }
    }
}
