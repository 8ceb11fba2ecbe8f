/// The instant the tests call "now": a fixed Unix time (2026-11-22T13:23:26Z), so that expiry arithmetic, goldens and
/// stored timestamps are the same on every run. The format vectors (FORMAT.md §11) and their generator use it too.
public enum ReferenceTime {
    /// In Unix seconds, as tokens' `cached_at` and `expires_on` count.
    public static let now: Int64 = 1_795_353_806

    /// In Unix milliseconds, as refresh leases count.
    public static let nowMilliseconds: Int64 = now * 1_000
}
