/// A transaction that can tell the time of the server its store lives on.
///
/// Refresh leases coordinate processes in real time (FORMAT.md §5.7). The processes of a directory share one
/// machine's clock; the hosts of a shared store do not, and a host whose clock runs ahead would take a lease that is
/// still another's. So lease times on a shared store are the server's: one clock for every host.
package protocol ServerClockReading {
    /// The server's clock now, in Unix milliseconds.
    func serverMilliseconds() throws -> Int64
}
