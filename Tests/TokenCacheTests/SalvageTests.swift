import Foundation
import Testing
import TokenCacheStorage
import TokenCacheRecords

@testable import TokenCache

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
            #expect(errorCode { try TokenStore.salvage(store.configuration, into: target) } == .invalidArgument, "not empty any more")
        }
    }

    @Test func aDamagedRecordIsLeftBehind() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            var (key, value) = try #require(try store.rawEntries(DatabaseName.refreshTokens).first)
            value[value.count - 1] ^= 1
            try store.rawPut(DatabaseName.refreshTokens, key: key, value: value)
            let target = store.root + "/salvaged"
            let report = try TokenStore.salvage(store.configuration, into: target)
            #expect(report.damagedRecords == 1 && report.salvaged[.refreshToken] == 599)
            #expect(try TokenStore.open(Self.configuration(store, target)).verify().isClean)
        }
    }

    /// What a salvage killed by a crash while reading one range leaves: run again, it skips that range and copies the
    /// rest.
    @Test func aSalvageRunAgainAfterACrashSkipsTheRangeThatCrashedIt() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let accessTokens = try store.rawEntries(DatabaseName.accessTokens)
            let crashed = Int(accessTokens[10].0[0]) << 8 | Int(accessTokens[10].0[1])
            let inRange = accessTokens.filter { Int($0.0[0]) << 8 | Int($0.0[1]) == crashed }.count
            let target = store.root + "/salvaged"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let database = try #require(DatabaseName.all.firstIndex(of: DatabaseName.accessTokens))
            try Data(SalvageProgress(committed: (0, 0), reading: (database, crashed)).bytes).write(to: URL(fileURLWithPath: target + "/" + SalvageProgress.fileName))
            let report = try TokenStore.salvage(store.configuration, into: target)
            #expect(report.resumed && report.unreadableRanges == 1)
            #expect(report.salvaged[.accessToken] == 600 - inRange && report.salvaged[.refreshToken] == 600)
            #expect(try TokenStore.open(Self.configuration(store, target)).verify().isClean)
        }
    }
}
