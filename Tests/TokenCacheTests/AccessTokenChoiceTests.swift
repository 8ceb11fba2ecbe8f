import Testing

@testable import TokenCache
import TokenCacheRecords
import TokenCacheStorage

/// The judgement step of a silent lookup on its own: no store, no encryption, entries and their opened parts made up.
@Suite struct AccessTokenChoiceTests {
    /// What opening a made-up entry gives: a token (summary and body agree), or damage in its summary or body.
    enum Record {
        case token(AccessToken)
        case damagedSummary(AccessToken)
        case damagedBody(AccessToken)
        case damaged
    }

    /// Opens made-up entries: the entry's key (one byte) indexes `records`.
    final class FakeOpener: AccessTokenOpening {
        let records: [Record]
        let keyring: Keyring
        private(set) var bodiesOpened: [UInt8] = []
        private(set) var summariesOpened: [UInt8] = []

        init(_ records: [Record]) throws {
            self.records = records
            keyring = try TokenStore.create(.inMemory()).store.keyring
        }

        func withSummary<R>(_ entry: BucketEntry, _ body: (AccessTokenSummaryView) throws(FormatError) -> R) throws(FormatError) -> R {
            summariesOpened.append(entry.key[0])
            let token: AccessToken
            switch records[Int(entry.key[0])] {
            case .token(let stored), .damagedBody(let stored): token = stored
            case .damagedSummary, .damaged: throw FormatError("summary does not authenticate")
            }
            return try AccessTokenSummary(token).withView { view in Result { () throws(FormatError) in try body(view) } }.get()
        }

        func decodeAccessToken(_ entry: BucketEntry, reusing query: SilentLookupQuery) -> Result<StoredEntity<AccessToken>, CorruptRecord> {
            bodiesOpened.append(entry.key[0])
            switch records[Int(entry.key[0])] {
            case .token(let token), .damagedSummary(let token):
                return .success(
                    StoredEntity(
                        entity: token, revision: 1, updatedAt: 0,
                        record: RecordFingerprint(space: KeySpace.accessTokens.name, key: Array(entry.key), deriver: keyring)
                    )
                )
            case .damagedBody, .damaged:
                return .failure(corruptAccessToken(entry, FormatError("body does not authenticate")))
            }
        }

        func corruptAccessToken(_ entry: BucketEntry, _ error: FormatError) -> CorruptRecord {
            CorruptRecord(kind: .accessToken, fingerprint: "entry-\(entry.key[0])", reason: error.message)
        }
    }

    static let now: Int64 = 1_800_000_000
    static let query = SilentLookupQuery(
        clientID: Samples.client, homeAccountID: Samples.home, environment: Samples.environment, realm: "utid1",
        scopes: ["user.read"], now: now
    )

    static func token(secret: String, cachedAgo: Int64 = 60, expiresIn: Int64 = 3600, target: String = "User.Read") -> AccessToken {
        var token = Samples.accessToken(target: target, secret: secret)
        token.cachedAt = now - cachedAgo
        token.expiresOn = now + expiresIn
        token.refreshOn = nil
        return token
    }

    /// Entries with one-byte keys 0, 1, …, `count - 1` (the value is the key: the fake opener needs only the key),
    /// in memory that outlives `body`'s use of the views.
    static func withEntries<R>(_ count: Int, _ body: ([BucketEntry]) throws -> R) rethrows -> R {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        defer { storage.deallocate() }
        for index in 0..<count { storage[index] = UInt8(index) }
        let entries = (0..<count).map { index in
            let view = UnsafeRawBufferPointer(rebasing: storage[index..<index + 1])
            return BucketEntry(key: view, value: view)
        }
        return try body(entries)
    }

    /// Runs the judgement over `records` as a bucket with keys 0, 1, …, fetched the way the lookup fetches it.
    static func choose(_ records: [Record], lone: Bool = false) throws -> (verdict: AccessTokenChoice<FakeOpener>.Verdict, corrupt: [String], opener: FakeOpener) {
        let opener = try FakeOpener(records)
        let plan = try SilentLookupPlan(query, aliases: .builtIn, index: opener.keyring.index)
        var choice = AccessTokenChoice(opener: opener)
        return withEntries(records.count) { entries in
            let contents: BucketContents =
                switch entries.count {
                case 0: .empty
                case 1: lone ? .lone(entries[0]) : .one(entries[0])
                case 2: .two(entries[0], entries[1])
                default: .more
                }
            var verdict = choice.judge(contents, against: plan, for: query)
            if case .readWholeBucket(let skippingLone) = verdict {
                verdict = choice.judge(.several(skippingLone ? Array(entries.dropFirst()) : entries), against: plan, for: query)
            }
            return (verdict, choice.corrupt.map(\.fingerprint), opener)
        }
    }

    static func secret(_ verdict: AccessTokenChoice<FakeOpener>.Verdict) -> String? {
        guard case .decided(let token) = verdict else { return "undecided" }
        return token?.entity.secret.reveal()
    }

    @Test func aBucketOfOneIsDecidedByItsBodyAloneWithoutOpeningTheSummary() throws {
        let usable = try Self.choose([.token(Self.token(secret: "a"))])
        #expect(Self.secret(usable.verdict) == "a")
        #expect(usable.opener.summariesOpened.isEmpty && usable.opener.bodiesOpened == [0])
        #expect(Self.secret(try Self.choose([.token(Self.token(secret: "a", expiresIn: 299))]).verdict) == nil)
        #expect(Self.secret(try Self.choose([.token(Self.token(secret: "a", target: "Mail.Read"))]).verdict) == nil)
        #expect(Self.secret(try Self.choose([]).verdict) == nil)
    }

    @Test func aDamagedOnlyTokenIsReportedAndOnlyALoneOneSendsTheJudgementToTheRestOfTheBucket() throws {
        let one = try Self.choose([.damaged])
        #expect(Self.secret(one.verdict) == nil && one.corrupt == ["entry-0"])
        // A damaged lone token with a token beside it (a writer could not move the damaged one): the other decides.
        let opener = try FakeOpener([.damaged, .token(Self.token(secret: "beside"))])
        let plan = try SilentLookupPlan(Self.query, aliases: .builtIn, index: opener.keyring.index)
        var choice = AccessTokenChoice(opener: opener)
        Self.withEntries(2) { entries in
            let verdict = choice.judge(.lone(entries[0]), against: plan, for: Self.query)
            guard case .readWholeBucket(skippingLone: true) = verdict else {
                Issue.record("a damaged lone token must send the judgement to the rest of its bucket, not \(verdict)")
                return
            }
            #expect(Self.secret(choice.judge(.several([entries[1]]), against: plan, for: Self.query)) == "beside")
            #expect(choice.corrupt.map(\.fingerprint) == ["entry-0"])
        }
    }

    @Test func severalArePickedBySummaryAndOnlyTheChosenBodyIsOpened() throws {
        let newer = try Self.choose([.token(Self.token(secret: "older", cachedAgo: 120)), .token(Self.token(secret: "newer", cachedAgo: 60))])
        #expect(Self.secret(newer.verdict) == "newer")
        #expect(newer.opener.summariesOpened == [0, 1] && newer.opener.bodiesOpened == [1])
        // Equal cached_at: the later expiry wins; unusable ones are never chosen.
        let later = try Self.choose([
            .token(Self.token(secret: "sooner", expiresIn: 1000)), .token(Self.token(secret: "later", expiresIn: 2000)),
            .token(Self.token(secret: "expired", cachedAgo: 10, expiresIn: 100)),
        ])
        #expect(Self.secret(later.verdict) == "later")
    }

    @Test func aDamagedChosenBodyYieldsTheNextBestAndEveryDamagedRecordIsReportedOnce() throws {
        let result = try Self.choose([
            .damagedSummary(Self.token(secret: "no summary")), .damagedBody(Self.token(secret: "best", cachedAgo: 1)),
            .token(Self.token(secret: "next", cachedAgo: 500)),
        ])
        #expect(Self.secret(result.verdict) == "next")
        #expect(result.corrupt == ["entry-0", "entry-1"])
        #expect(result.opener.bodiesOpened == [1, 2])
    }
}
