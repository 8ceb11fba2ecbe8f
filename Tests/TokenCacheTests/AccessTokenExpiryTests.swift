import Testing

@testable import TokenCache

@Suite struct AccessTokenExpiryTests {
    static let now: Int64 = 1_700_000_000

    @Test func minimumRemainingLifetimeIsFiveMinutes() {
        #expect(AccessTokenExpiry.minimumRemainingLifetime == 300)
    }

    @Test(arguments: [
        (Int64(300), AccessTokenUsability.usable(refreshRecommended: false)),
        (299, .expiringOrExpired),
        (301, .usable(refreshRecommended: false)),
        (3_600, .usable(refreshRecommended: false)),
        (1, .expiringOrExpired),
        (0, .expiringOrExpired),
        (-1, .expiringOrExpired),
        (-86_400, .expiringOrExpired),
    ])
    func remainingLifetimeBoundary(secondsLeft: Int64, expected: AccessTokenUsability) {
        let result = AccessTokenExpiry.usability(expiresOn: Self.now + secondsLeft, cachedAt: Self.now - 3_600, refreshOn: nil, now: Self.now)
        #expect(result == expected)
        #expect(result.isUsable == (secondsLeft >= 300))
    }

    @Test(arguments: [
        (Int64(1), AccessTokenUsability.cachedInFuture),
        (86_400, .cachedInFuture),
        (0, .usable(refreshRecommended: false)),
        (-1, .usable(refreshRecommended: false)),
        (-3_600, .usable(refreshRecommended: false)),
    ])
    func cachedAtRelativeToNow(offset: Int64, expected: AccessTokenUsability) {
        let result = AccessTokenExpiry.usability(expiresOn: Self.now + 3_600, cachedAt: Self.now + offset, refreshOn: nil, now: Self.now)
        #expect(result == expected)
    }

    @Test func cachedInFutureWinsOverExpiry() {
        let result = AccessTokenExpiry.usability(expiresOn: Self.now - 10, cachedAt: Self.now + 1, refreshOn: Self.now - 10, now: Self.now)
        #expect(result == .cachedInFuture)
        #expect(!result.isUsable)
    }

    @Test(arguments: [
        (Int64?.some(-1), true),
        (0, true),  // refresh_on == now has been reached
        (-3_000, true),
        (1, false),
        (1_000, false),
        (nil, false),
    ] as [(Int64?, Bool)])
    func refreshOnFlagsAnOtherwiseUsableToken(refreshOffset: Int64?, recommended: Bool) {
        let result = AccessTokenExpiry.usability(
            expiresOn: Self.now + 3_600, cachedAt: Self.now - 100, refreshOn: refreshOffset.map { Self.now + $0 }, now: Self.now
        )
        #expect(result == .usable(refreshRecommended: recommended))
        #expect(result.isUsable)
    }

    @Test func passedRefreshOnDoesNotRescueAnExpiringToken() {
        let result = AccessTokenExpiry.usability(expiresOn: Self.now + 299, cachedAt: Self.now - 100, refreshOn: Self.now - 1, now: Self.now)
        #expect(result == .expiringOrExpired)
    }

    @Test(arguments: [
        (Int64.max, Int64.min, Int64?.some(Int64.min), Int64.min, AccessTokenUsability.usable(refreshRecommended: true)),
        (Int64.min, Int64.min, nil, Int64.max, .expiringOrExpired),
        (Int64.max, 0, nil, Int64.max, .expiringOrExpired),
        (Int64.max, 0, nil, Int64.max - 300, .usable(refreshRecommended: false)),
        (Int64.max, 0, nil, Int64.max - 299, .expiringOrExpired),
        (Int64.min + 299, Int64.min, nil, Int64.min, .expiringOrExpired),
        (Int64.min + 300, Int64.min, nil, Int64.min, .usable(refreshRecommended: false)),
        (0, Int64.max, nil, Int64.min, .cachedInFuture),
        (Int64.max, Int64.min, Int64.max, -1, .usable(refreshRecommended: false)),
        (Int64.min, 0, nil, 1, .expiringOrExpired),
        (Int64.max, -1, nil, -1, .usable(refreshRecommended: false)),
        (Int64.max, Int64.max, Int64.max, Int64.max, .expiringOrExpired),
    ] as [(Int64, Int64, Int64?, Int64, AccessTokenUsability)])
    func extremeValuesNeverTrap(expiresOn: Int64, cachedAt: Int64, refreshOn: Int64?, now: Int64, expected: AccessTokenUsability) {
        #expect(AccessTokenExpiry.usability(expiresOn: expiresOn, cachedAt: cachedAt, refreshOn: refreshOn, now: now) == expected)
    }

    static let edges: [Int64] = [
        .min, .min + 1, .min + 299, .min + 300, .min + 301, -301, -300, -1, 0, 1, 299, 300, 301,
        .max - 301, .max - 300, .max - 299, .max - 1, .max,
    ]

    @Test(arguments: edges, edges)
    func remainingLifetimeMatchesWideArithmetic(expiresOn: Int64, now: Int64) {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return }
        let usable = Int128(expiresOn) - Int128(now) >= 300
        let result = AccessTokenExpiry.usability(expiresOn: expiresOn, cachedAt: .min, refreshOn: nil, now: now)
        #expect(result == (usable ? .usable(refreshRecommended: false) : .expiringOrExpired))
    }

    @Test(arguments: edges, edges)
    func cachedAtIsInTheFutureExactlyWhenAfterNow(cachedAt: Int64, now: Int64) {
        let result = AccessTokenExpiry.usability(expiresOn: .max, cachedAt: cachedAt, refreshOn: nil, now: now)
        #expect((result == .cachedInFuture) == (cachedAt > now))
    }
}
