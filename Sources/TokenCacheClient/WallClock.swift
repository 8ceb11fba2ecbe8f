import Foundation

/// Where the client reads the time: the expiry of every token is judged against it.
///
/// Token lifetimes are wall-clock instants (`expires_on`, Unix seconds), so this is a wall clock, not a monotonic
/// one. Inject a clock of your own to test the silent flow at any moment (the tests move a clock past `refresh_on`
/// and `expires_on` instead of sleeping).
public protocol WallClock: Sendable {
    /// The current time, in Unix seconds.
    func now() -> Int64
}

/// The system's wall clock (`Date()`), the client's default.
public struct SystemWallClock: WallClock {
    /// The system clock.
    public init() {}

    /// `Date().timeIntervalSince1970`, rounded down to whole seconds.
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970.rounded(.down)) }
}

extension WallClock where Self == SystemWallClock {
    /// The system's wall clock.
    public static var system: SystemWallClock { SystemWallClock() }
}
