import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import TokenCache
@testable import TokenCacheMSAL

/// `TokenStore.importMSAL` and `exportMSAL`: what reaches the store, the merge rule against stored records, all or
/// nothing, the kept sections, and the round trip.
@Suite struct MSALStoreImportTests {
    typealias S = MSALTestSupport

    /// The store's entities, in the same canonical order as a folded file's.
    static func content(of cache: TokenStore) throws -> MSALCacheContent {
        let snapshot = try cache.read { try $0.snapshot() }
        #expect(snapshot.corrupt.isEmpty)
        var content = MSALCacheContent()
        content.accessTokens = snapshot.accessTokens.map(\.entity)
        content.refreshTokens = snapshot.refreshTokens.map(\.entity)
        content.idTokens = snapshot.idTokens.map(\.entity)
        content.accounts = snapshot.accounts.map(\.entity)
        content.appMetadata = snapshot.appMetadata.map(\.entity)
        return S.sorted(content)
    }

    static func entities(_ content: MSALCacheContent) -> MSALCacheContent {
        var copy = S.sorted(content)
        copy.unknownSections = [:]
        return copy
    }

    static func token(_ target: String, secret: String, cachedAt: Int64, expiresOn: Int64 = 1_900_000_000, environment: String = "login.microsoftonline.com")
        -> String
    {
        """
        {"home_account_id": "uid.utid", "environment": "\(environment)", "client_id": "client-1", "realm": "tenant-1", \
        "target": "\(target)", "secret": "\(secret)", "cached_at": "\(cachedAt)", "expires_on": "\(expiresOn)", \
        "credential_type": "AccessToken"}
        """
    }

    static func accessTokens(_ entries: [String]) -> [UInt8] {
        let members = entries.enumerated().map { "\"entry-\($0.offset)\": \($0.element)" }.joined(separator: ", ")
        return Array("{\"AccessToken\": {\(members)}}".utf8)
    }

    @Test(arguments: MSALFixtures.names, TestBackend.allCases)
    func aFixtureImportsAsTheFileFoldsAndExportsBack(fixture: String, backend: TestBackend) throws {
        let bytes = try MSALFixtures.bytes(fixture)
        let folded = try S.importAll(bytes)
        try TestStore.with(backend) { _, cache in
            let report = try cache.importMSAL(from: .bytes(bytes))
            let expected = Self.entities(folded.content)
            #expect(try Self.content(of: cache) == expected)
            let total = expected.accessTokens.count + expected.refreshTokens.count + expected.idTokens.count + expected.accounts.count
                + expected.appMetadata.count
            // Every entry was written once per identity, or merged into the record of an earlier entry of the same
            // identity (a file may repeat an identity); the store was empty, so no stored record was kept.
            #expect(report.writtenCount + report.mergedInFile.values.reduce(0, +) == report.entries)
            #expect(report.keptExisting.isEmpty)
            #expect(report.writtenCount == total)
            #expect(report.keptSections == folded.unknownSections.keys.sorted())
            #expect(report.rejected.isEmpty)

            // The export holds the same entities and the kept sections, and a second export is the same bytes.
            let first = try cache.exportMSAL(options: MSALExportOptions(includeSecrets: true))
            #expect(first.report.writtenCount == total)
            #expect(first.report.sections == folded.unknownSections.count)
            let reread = try S.importAll(first.document)
            #expect(Self.entities(reread.content) == expected)
            #expect(reread.unknownSections == folded.unknownSections)
            #expect(try cache.exportMSAL(options: MSALExportOptions(includeSecrets: true)).document == first.document)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func importingAFileTwiceChangesNothing(backend: TestBackend) throws {
        let bytes = try MSALFixtures.bytes("python-1.39.json")
        try TestStore.with(backend) { _, cache in
            let first = try cache.importMSAL(from: .bytes(bytes))
            let before = try cache.read { try $0.snapshot() }
            let second = try cache.importMSAL(from: .bytes(bytes))
            #expect(second.writtenCount == 0)
            #expect(second.keptExisting.values.reduce(0, +) == first.writtenCount)
            let after = try cache.read { try $0.snapshot() }
            #expect(after.accessTokens.map(\.revision) == before.accessTokens.map(\.revision))
            #expect(after.refreshTokens.map(\.revision) == before.refreshTokens.map(\.revision))
        }
    }

    /// (stored cached_at/expires_on, imported cached_at/expires_on) → whether the imported token replaces the stored one.
    @Test(arguments: [
        (100, 500, 200, 500, true), (200, 500, 100, 500, false), (100, 500, 100, 600, true), (100, 600, 100, 500, false),
        (100, 500, 100, 500, false),
    ] as [(Int64, Int64, Int64, Int64, Bool)])
    func theLaterWrittenTokenWins(stored: (Int64, Int64, Int64, Int64, Bool)) throws {
        let (storedCachedAt, storedExpiry, importedCachedAt, importedExpiry, replaces) = stored
        try TestStore.with { _, cache in
            try cache.importMSAL(from: .bytes(Self.accessTokens([Self.token("User.Read", secret: "OLD", cachedAt: storedCachedAt, expiresOn: storedExpiry)])))
            let report = try cache.importMSAL(
                from: .bytes(Self.accessTokens([Self.token("user.read", secret: "NEW", cachedAt: importedCachedAt, expiresOn: importedExpiry)])))
            let tokens = try cache.read { try $0.list(AccessToken.self) }.records
            #expect(tokens.count == 1)
            #expect(tokens.first?.entity.secret.reveal() == (replaces ? "NEW" : "OLD"))
            #expect(report.written[.accessToken, default: 0] == (replaces ? 1 : 0))
            #expect(report.keptExisting[.accessToken, default: 0] == (replaces ? 0 : 1))
            // A replaced record's revision continues.
            #expect(tokens.first?.revision == (replaces ? 2 : 1))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aNewerImportedTokenSupersedesOverlappingStoredOnesAndAnOlderOneIsDropped(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.importMSAL(from: .bytes(Self.accessTokens([
                Self.token("User.Read Mail.Read", secret: "STORED-OVERLAP", cachedAt: 100),
                Self.token("Files.Read", secret: "STORED-OTHER", cachedAt: 100),
                Self.token("User.Read", secret: "STORED-OTHER-CLOUD", cachedAt: 100, environment: "login.microsoftonline.us"),
            ])))
            let newer = try cache.importMSAL(from: .bytes(Self.accessTokens([Self.token("user.read calendars.read", secret: "IMPORTED", cachedAt: 200)])))
            #expect(newer.accessTokensSuperseded == 1)
            var secrets = Set(try cache.read { try $0.list(AccessToken.self) }.records.map { $0.entity.secret.reveal() })
            #expect(secrets == ["IMPORTED", "STORED-OTHER", "STORED-OTHER-CLOUD"])

            let older = try cache.importMSAL(from: .bytes(Self.accessTokens([Self.token("Calendars.Read Files.Read", secret: "OLDER", cachedAt: 150)])))
            #expect(older.written[.accessToken, default: 0] == 0)
            #expect(older.keptExisting[.accessToken] == 1)
            #expect(older.accessTokensSuperseded == 0)
            secrets = Set(try cache.read { try $0.list(AccessToken.self) }.records.map { $0.entity.secret.reveal() })
            #expect(secrets == ["IMPORTED", "STORED-OTHER", "STORED-OTHER-CLOUD"])
        }
    }

    /// MSAL's readers keep the last entry of a key repeated in one section: an import refuses such a file, naming
    /// the section and both entries' offsets; with --skip-invalid it rejects the earlier ones and imports the last.
    @Test func aKeyRepeatedInOneSectionIsRefusedOrTheLastIsImported() throws {
        let first = Self.token("User.Read", secret: "FIRST", cachedAt: 200)
        let last = Self.token("Mail.Read", secret: "LAST", cachedAt: 100)
        let text = "{\"AccessToken\": {\"k\": \(first), \"other\": \(Self.token("Files.Read", secret: "O", cachedAt: 1)), \"k\": \(last)}}"
        let bytes = Array(text.utf8)
        let firstOffset = Array(text.utf8).firstRange(of: Array(first.utf8))!.lowerBound
        let lastOffset = Array(text.utf8).lastRange(of: Array(last.utf8))!.lowerBound
        try TestStore.with { _, cache in
            let error = #expect(throws: TokenCacheError.self) { try cache.importMSAL(from: .bytes(bytes)) }
            #expect(error?.code == .invalidArgument)
            let message = error?.message ?? ""
            #expect(message.contains("section \"AccessToken\" at byte \(lastOffset)"), "\(message)")
            #expect(message.contains("as the entry at byte \(firstOffset)"), "\(message)")
            #expect(message.contains("fingerprint "))
            #expect(!message.contains("FIRST") && !message.contains("LAST"))
            #expect(try cache.read { try $0.snapshot() }.accessTokens.isEmpty)

            let report = try cache.importMSAL(from: .bytes(bytes), options: MSALImportOptions(skipInvalid: true))
            #expect(report.rejected.map(\.offset) == [firstOffset])
            #expect(report.rejected.first?.reason.contains("same key") == true)
            let secrets = try cache.read { try $0.snapshot() }.accessTokens.map { $0.entity.secret.reveal() }.sorted()
            #expect(secrets == ["LAST", "O"])
        }
    }

    @Test func overlappingTokensOfOneFileAreAllKept() throws {
        try TestStore.with { _, cache in
            let report = try cache.importMSAL(from: .bytes(Self.accessTokens([
                Self.token("User.Read Mail.Read", secret: "A", cachedAt: 100), Self.token("User.Read", secret: "B", cachedAt: 200),
            ])))
            #expect(report.written[.accessToken] == 2)
            #expect(report.accessTokensSuperseded == 0)
            // The lookup's candidate order picks the most recently cached.
            let result = try cache.silentLookup(
                SilentLookupQuery(
                    clientID: "client-1", homeAccountID: "uid.utid", environment: "login.microsoftonline.com", realm: "tenant-1",
                    scopes: ["user.read"], now: 1_800_000_000))
            #expect(result.accessToken?.entity.secret.reveal() == "B")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func anInvalidEntryImportsNothingAndTheErrorLocatesIt(backend: TestBackend) throws {
        let file = Self.accessTokens([
            Self.token("User.Read", secret: "VALID-CANARY-1", cachedAt: 100),
            S.accessToken(replacing: ["expires_on"]).replacingOccurrences(of: "AT-CANARY-7731", with: "INVALID-CANARY-2"),
        ])
        try TestStore.with(backend) { _, cache in
            try cache.put(Samples.account())
            let before = try Self.content(of: cache)
            // Batches of one: without the check of the whole file first, the valid entry would be committed.
            let error = try #require(throws: TokenCacheError.self) {
                try cache.importMSAL(from: .bytes(file), options: MSALImportOptions(batchSize: 1))
            }
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("section \"AccessToken\"") && error.message.contains("at byte") && error.message.contains("expires_on"))
            for secret in ["VALID-CANARY-1", "INVALID-CANARY-2", "uid.utid", "entry-1"] { #expect(!error.message.contains(secret), "\(secret)") }
            #expect(try Self.content(of: cache) == before)
        }
    }

    @Test func skipInvalidImportsTheRestAndListsTheRejectedByFingerprint() throws {
        let file = Self.accessTokens([
            Self.token("User.Read", secret: "VALID-CANARY-1", cachedAt: 100),
            S.accessToken("\"target\": \"bad\\u0001scope\"", replacing: ["target"]),
            S.accessToken(replacing: ["secret"]),
        ])
        try TestStore.with { _, cache in
            let report = try cache.importMSAL(from: .bytes(file), options: MSALImportOptions(skipInvalid: true))
            #expect(report.entries == 3)
            #expect(report.written[.accessToken] == 1)
            #expect(report.rejected.map(\.field) == ["target", "secret"])
            #expect(report.rejected.allSatisfy { $0.section == "AccessToken" && $0.fingerprint.count == 16 && $0.offset > 0 })
            #expect(Set(report.rejected.map(\.fingerprint)).count == 2)
            #expect(!"\(report)".contains("AT-CANARY-7731") && !"\(report)".contains("uid.utid"))
        }
    }

    @Test(arguments: ["", "[]", "{\"AccessToken\": [1]}", "{\"AccessToken\": {\"k\": {}", "not json"])
    func aFileThatIsNotAnMSALCacheIsRefusedEvenWhenSkippingInvalidEntries(text: String) throws {
        try TestStore.with { _, cache in
            for skip in [false, true] {
                let error = try #require(throws: TokenCacheError.self) {
                    try cache.importMSAL(from: .bytes(Array(text.utf8)), options: MSALImportOptions(skipInvalid: skip))
                }
                #expect(error.code == .invalidArgument)
                #expect(error.message.hasPrefix("MSAL cache"))
            }
            #expect(try cache.read { try $0.list(AccessToken.self) }.records.isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func replaceMakesTheStoreExactlyTheFile(backend: TestBackend) throws {
        let bytes = try MSALFixtures.bytes("dotnet.json")
        try TestStore.with(backend) { _, cache in
            try cache.importMSAL(from: .bytes(try MSALFixtures.bytes("go.json")))
            let previous = try cache.read { try $0.snapshot() }
            let count = previous.accessTokens.count + previous.refreshTokens.count + previous.idTokens.count + previous.accounts.count
                + previous.appMetadata.count
            let report = try cache.importMSAL(from: .bytes(bytes), options: MSALImportOptions(mode: .replace))
            #expect(report.removedByReplace == count)
            #expect(try Self.content(of: cache) == Self.entities(try S.importAll(bytes).content))
            #expect(try cache.read { try cache.store.foreignSections(in: $0.transaction) } == (try S.importAll(bytes)).unknownSections)
        }
    }

    @Test func batchesReportProgressAndAFileIsReadInChunks() throws {
        try withTemporaryDirectory { root in
            let path = root + "/cache.json"
            let file = Self.accessTokens((0..<5).map { Self.token("Scope.\($0)", secret: "S\($0)", cachedAt: 100) })
            try Data(file).write(to: URL(fileURLWithPath: path))
            try TestStore.with { _, cache in
                var ticks: [MSALImportProgress] = []
                let report = try cache.importMSAL(from: .file(path: path), options: MSALImportOptions(batchSize: 2)) { ticks.append($0) }
                #expect(report.written[.accessToken] == 5)
                #expect(ticks.map(\.entriesDone) == [0, 2, 4, 5])
                #expect(ticks.allSatisfy { $0.entriesTotal == 5 })
                let missing = try #require(throws: TokenCacheError.self) { try cache.importMSAL(from: .file(path: root + "/absent.json")) }
                #expect(missing.code == .invalidArgument && missing.message.contains("does not exist"))
            }
        }
    }

    @Test func keptSectionsAreSealedLikeTokens() throws {
        let file = Array("{\"AccessToken\": {}, \"MySDKState\": {\"note\": \"SECTION-CANARY-5520\", \"n\": [1, 2.5]}}".utf8)
        try TestStore.with { store, cache in
            let report = try cache.importMSAL(from: .bytes(file))
            #expect(report.keptSections == ["MySDKState"])
            let data = try Data(contentsOf: URL(fileURLWithPath: store.directory + "/data.mdb"))
            #expect(data.range(of: Data("SECTION-CANARY-5520".utf8)) == nil)
            #expect(data.range(of: Data("MySDKState".utf8)) == nil)
            let exported = try cache.exportMSAL(options: MSALExportOptions(includeSecrets: true)).document
            #expect(try S.importAll(exported).unknownSections == ["MySDKState": .object(["note": .string("SECTION-CANARY-5520"), "n": .array([.integer(1), .double(2.5)])])])
            // Without secrets a section may hold one as well: its strings are redacted, its shape and numbers stay.
            let redacted = try cache.exportMSAL().document
            #expect(try S.importAll(redacted).unknownSections == ["MySDKState": .object(["note": .string(Secret.redactionMarker), "n": .array([.integer(1), .double(2.5)])])])
            // A filtered export is not the whole cache: the sections stay out.
            let filtered = try cache.exportMSAL(options: MSALExportOptions(filter: RecordFilter(clientID: "client-1"))).document
            #expect(try S.importAll(filtered).unknownSections.isEmpty)
        }
    }

    @Test func exportFiltersAndRedacts() throws {
        try TestStore.with { _, cache in
            var foreign = Self.token("Mail.Read", secret: "FOREIGN-SECRET-CANARY", cachedAt: 100)
            foreign.removeLast()
            foreign += ", \"x_sdk_state\": {\"rt\": \"UNKNOWN-FIELD-CANARY\", \"n\": 7}, \"x_note\": \"NOTE-CANARY\"}"
            try cache.importMSAL(from: .bytes(Self.accessTokens([foreign])))
            try cache.importMSAL(from: .bytes(Self.accessTokens([
                Self.token("User.Read", secret: "PUBLIC-CLOUD-CANARY", cachedAt: 100),
                Self.token("User.Read", secret: "US-GOV-CANARY", cachedAt: 100, environment: "login.microsoftonline.us"),
            ])))
            let redacted = try cache.exportMSAL()
            #expect(!redacted.report.includesSecrets)
            let text = String(decoding: redacted.document, as: UTF8.self)
            #expect(!text.contains("CANARY") && text.contains(Secret.redactionMarker))
            #expect(text.contains("\"n\":7"))
            let publicCloud = try cache.exportMSAL(options: MSALExportOptions(includeSecrets: true, environment: "login.windows.net"))
            #expect(publicCloud.report.written[.accessToken] == 2)
            #expect(Set(try S.importAll(publicCloud.document).content.accessTokens.map { $0.secret.reveal() }) == ["PUBLIC-CLOUD-CANARY", "FOREIGN-SECRET-CANARY"])
            #expect(String(decoding: publicCloud.document, as: UTF8.self).contains("UNKNOWN-FIELD-CANARY"))
            let otherAccount = try cache.exportMSAL(options: MSALExportOptions(filter: RecordFilter(homeAccountID: "someone.else")))
            #expect(otherAccount.report.writtenCount == 0)
        }
    }

    @Test func whatTheStoreWouldRefuseAtWriteTimeIsRefusedBeforeAnythingIsWritten() throws {
        let huge = String(repeating: "x", count: 300_000)
        var oversize = Self.token("Mail.Read", secret: "OVERSIZE-CANARY", cachedAt: 100)
        oversize.removeLast()
        oversize += ", \"x_blob\": \"\(huge)\"}"
        let file = Self.accessTokens([Self.token("User.Read", secret: "FIRST-CANARY", cachedAt: 100), oversize])
        try TestStore.with { _, cache in
            let error = try #require(throws: TokenCacheError.self) {
                try cache.importMSAL(from: .bytes(file), options: MSALImportOptions(batchSize: 1))
            }
            #expect(error.code == .invalidArgument && error.message.contains("exceeds"))
            #expect(try cache.read { try $0.list(AccessToken.self) }.records.isEmpty)
            let skipped = try cache.importMSAL(from: .bytes(file), options: MSALImportOptions(skipInvalid: true, batchSize: 1))
            #expect(skipped.written[.accessToken] == 1 && skipped.rejected.count == 1)

            // A section the store cannot keep (an empty name) stops the import before its first batch too.
            let badSection = Array("{\"AccessToken\": \(String(decoding: Self.accessTokens([Self.token("Files.Read", secret: "S", cachedAt: 1)]), as: UTF8.self).dropFirst(16).dropLast()), \"\": 1}".utf8)
            let sectionError = try #require(throws: TokenCacheError.self) {
                try cache.importMSAL(from: .bytes(badSection), options: MSALImportOptions(batchSize: 1))
            }
            #expect(sectionError.message.contains("section name"))
            #expect(try cache.read { try $0.list(AccessToken.self) }.records.count == 1)
        }
    }

    @Test func aRotatedRefreshTokenWithoutTimesReplacesTheStoredOne() throws {
        func refreshToken(_ secret: String) -> [UInt8] {
            Array("""
                {"RefreshToken": {"k": {"home_account_id": "uid.utid", "environment": "login.microsoftonline.com", \
                "client_id": "client-1", "secret": "\(secret)", "credential_type": "RefreshToken"}}}
                """.utf8)
        }
        try TestStore.with { _, cache in
            try cache.importMSAL(from: .bytes(refreshToken("RT-OLD")))
            let same = try cache.importMSAL(from: .bytes(refreshToken("RT-OLD")))
            #expect(same.keptExisting[.refreshToken] == 1)
            let rotated = try cache.importMSAL(from: .bytes(refreshToken("RT-NEW")))
            #expect(rotated.written[.refreshToken] == 1)
            #expect(try cache.read { try $0.list(RefreshToken.self) }.records.map { $0.entity.secret.reveal() } == ["RT-NEW"])
        }
    }

    @Test func replacingContinuesTheRevisionsOfReimportedRecords() throws {
        let file = Self.accessTokens([Self.token("User.Read", secret: "A", cachedAt: 100)])
        try TestStore.with { _, cache in
            try cache.importMSAL(from: .bytes(file))
            let stored = try #require(try cache.read { try $0.list(AccessToken.self) }.records.first)
            var edited = stored.entity
            edited.cachedAt += 1
            try cache.put(edited, expectedRevision: stored.revision)
            try cache.put(edited)
            try cache.importMSAL(from: .bytes(file), options: MSALImportOptions(mode: .replace))
            let replaced = try #require(try cache.read { try $0.list(AccessToken.self) }.records.first)
            #expect(replaced.entity.cachedAt == 100)
            // Revision 3 before: a compare-and-swap against revision 1 must not succeed now.
            #expect(replaced.revision == 4)
        }
    }

    @Test func aFileThatIsNotRegularIsReadOnce() throws {
        try withTemporaryDirectory { root in
            let fifo = root + "/cache.fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let file = Self.accessTokens([Self.token("User.Read", secret: "PIPED", cachedAt: 100)])
            let writer = Thread {
                if let handle = FileHandle(forWritingAtPath: fifo) {
                    handle.write(Data(file))
                    try? handle.close()
                }
            }
            writer.start()
            try TestStore.with { _, cache in
                let report = try cache.importMSAL(from: .file(path: fifo))
                #expect(report.written[.accessToken] == 1)
            }
        }
    }

    @Test func exportEscapesWhatCouldDriveATerminal() throws {
        try TestStore.with { _, cache in
            var account = Samples.account()
            account.username = "evil\u{202E}txt\u{9B}2J\u{7F}@contoso.example"
            try cache.put(account)
            let text = String(decoding: try cache.exportMSAL().document, as: UTF8.self)
            #expect(text.contains("evil\\u202etxt\\u009b2J\\u007f@contoso.example"))
            #expect(!text.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x9B || $0.value == 0x7F })
            #expect(try S.importAll(Array(text.utf8)).content.accounts.first?.username == account.username)
        }
    }
}
