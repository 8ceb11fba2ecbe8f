import TestSupport
import Testing

@testable import TokenCache

@Suite struct CandidateOrderTests {
    typealias Candidate = AccessTokenCandidate

    @Test func laterCachedAtDominatesExpiryAndTiebreak() {
        let newer = Candidate(cachedAt: 2_000, expiresOn: 3_000, tiebreak: [0xFF])
        let older = Candidate(cachedAt: 1_999, expiresOn: 9_000, tiebreak: [0x00])
        #expect(CandidateOrder.prefers(newer, over: older))
        #expect(!CandidateOrder.prefers(older, over: newer))
    }

    @Test func sameCachedAtPrefersLaterExpiry() {
        let longer = Candidate(cachedAt: 2_000, expiresOn: 5_001, tiebreak: [0xFF])
        let shorter = Candidate(cachedAt: 2_000, expiresOn: 5_000, tiebreak: [0x00])
        #expect(CandidateOrder.prefers(longer, over: shorter))
        #expect(!CandidateOrder.prefers(shorter, over: longer))
    }

    @Test(arguments: [
        ([UInt8]([0x01]), [UInt8]([0x02])),
        ([0x01], [0x01, 0x00]),  // a prefix sorts first
        ([], [0x00]),
        ([0x7F, 0xFF], [0x80]),  // bytes are unsigned
    ])
    func fullTiePrefersTheSmallerTiebreak(smaller: [UInt8], larger: [UInt8]) {
        let a = Candidate(cachedAt: 2_000, expiresOn: 5_000, tiebreak: smaller)
        let b = Candidate(cachedAt: 2_000, expiresOn: 5_000, tiebreak: larger)
        #expect(CandidateOrder.prefers(a, over: b))
        #expect(!CandidateOrder.prefers(b, over: a))
    }

    static let pool: [Candidate] = {
        var pool: [Candidate] = []
        for cachedAt: Int64 in [.min, 0, 1_000, .max] {
            for expiresOn: Int64 in [.min, 1_000, 2_000, .max] {
                for key: [UInt8] in [[], [0x00], [0x01], [0x01, 0x00]] {
                    pool.append(Candidate(cachedAt: cachedAt, expiresOn: expiresOn, tiebreak: key))
                }
            }
        }
        return pool
    }()

    @Test func isAStrictTotalOrderOnDistinctCandidates() {
        for a in Self.pool {
            #expect(!CandidateOrder.prefers(a, over: a))
            for b in Self.pool where a != b {
                #expect(CandidateOrder.prefers(a, over: b) != CandidateOrder.prefers(b, over: a), "\(a) vs \(b)")
            }
        }
        let sample = stride(from: 0, to: Self.pool.count, by: 5).map { Self.pool[$0] }
        for a in sample {
            for b in sample where CandidateOrder.prefers(a, over: b) {
                for c in sample where CandidateOrder.prefers(b, over: c) {
                    #expect(CandidateOrder.prefers(a, over: c))
                }
            }
        }
    }

    @Test func positionalFormAgreesWithTheCandidateForm() {
        for a in Self.pool {
            for b in Self.pool {
                let positional = CandidateOrder.prefers(
                    cachedAt: a.cachedAt, expiresOn: a.expiresOn, tiebreak: a.tiebreak, over: b.cachedAt, b.expiresOn, b.tiebreak
                )
                #expect(positional == CandidateOrder.prefers(a, over: b))
            }
        }
    }

    @Test func bestOfNoneOrOne() {
        #expect(CandidateOrder.best([]) == nil)
        #expect(CandidateOrder.best([Candidate(cachedAt: 0, expiresOn: 0, tiebreak: [])]) == 0)
    }

    @Test(arguments: 0..<50)
    func bestIsTheSameWhateverTheOrder(seed: Int) throws {
        let winner = Candidate(cachedAt: .max, expiresOn: .max, tiebreak: [])
        var generator = SplitMix64(seed: UInt64(seed))
        let shuffled = Self.pool.shuffled(using: &generator)
        let index = try #require(CandidateOrder.best(shuffled))
        #expect(shuffled[index] == winner)

        // Without the overall winner, the runner-up is still found regardless of order.
        let rest = shuffled.filter { $0 != winner }
        let second = try #require(CandidateOrder.best(rest))
        #expect(rest[second] == Candidate(cachedAt: .max, expiresOn: .max, tiebreak: [0x00]))
    }

    @Test func bestPicksNewestThenLongestThenSmallestKey() throws {
        let candidates = [
            Candidate(cachedAt: 100, expiresOn: 4_000, tiebreak: [0x09]),
            Candidate(cachedAt: 200, expiresOn: 3_000, tiebreak: [0x05]),
            Candidate(cachedAt: 200, expiresOn: 3_600, tiebreak: [0x07]),
            Candidate(cachedAt: 200, expiresOn: 3_600, tiebreak: [0x06]),
            Candidate(cachedAt: 150, expiresOn: 9_000, tiebreak: [0x00]),
        ]
        #expect(CandidateOrder.best(candidates) == 3)
    }

    @Test func bestAmongIdenticalCandidatesIsTheFirst() {
        let same = Candidate(cachedAt: 1, expiresOn: 2, tiebreak: [3])
        #expect(CandidateOrder.best([Candidate(cachedAt: 0, expiresOn: 0, tiebreak: []), same, same, same]) == 1)
    }
}
