import Testing
@testable import TokenCache

/// The choice of tokens to evict from a sample, without a store.
@Suite struct EvictionChoiceTests {
    typealias Candidate = EvictionChoice.Candidate
    static let now: Int64 = 1_800_000_000

    static func candidate(_ id: UInt8, cachedAt: Int64, expiresOn: Int64 = now + 3_600) -> Candidate {
        Candidate(key: [id], cachedAt: cachedAt, expiresOn: expiresOn)
    }

    /// Every expired token of the sample may go, beyond a quarter of it; a valid one only within the quarter.
    @Test(arguments: [(1, [[UInt8(4)]]), (2, [[4], [2]]), (3, [[4], [2]]), (9, [[4], [2]])])
    func expiredTokensGoFirstOldestFirst(needed: Int, expected: [[UInt8]]) {
        let sample = [
            Self.candidate(1, cachedAt: 10), Self.candidate(2, cachedAt: 50, expiresOn: Self.now),
            Self.candidate(3, cachedAt: 5), Self.candidate(4, cachedAt: 40, expiresOn: Self.now - 1),
        ]
        #expect(EvictionChoice.victims(from: sample, needed: needed, now: Self.now) == expected)
    }

    @Test(arguments: [(1, [[UInt8(3)]]), (2, [[3], [1]]), (3, [[3], [1]]), (50, [[3], [1]])])
    func otherwiseTheOldestByCachedAtUpToAQuarterOfTheSample(needed: Int, expected: [[UInt8]]) {
        let sample = [
            Self.candidate(1, cachedAt: 10), Self.candidate(2, cachedAt: 50), Self.candidate(3, cachedAt: 5),
            Self.candidate(4, cachedAt: 60), Self.candidate(5, cachedAt: 70), Self.candidate(6, cachedAt: 20),
            Self.candidate(7, cachedAt: 30), Self.candidate(8, cachedAt: 40),
        ]
        #expect(EvictionChoice.victims(from: sample, needed: needed, now: Self.now) == expected)
    }

    @Test func aSmallSampleStillGivesOneAndTiesGoInStorageOrder() {
        let sample = [Self.candidate(9, cachedAt: 7), Self.candidate(4, cachedAt: 7)]
        #expect(EvictionChoice.victims(from: sample, needed: 5, now: Self.now) == [[9]])
    }

    @Test func nothingIsNeededOrNothingWasSampled() {
        #expect(EvictionChoice.victims(from: [Self.candidate(1, cachedAt: 1)], needed: 0, now: Self.now).isEmpty)
        #expect(EvictionChoice.victims(from: [], needed: 3, now: Self.now).isEmpty)
    }
}
