import TokenCache
import TokenCacheOperations

/// The words each view puts on a store's counts, so that `inspect --summary`, `stats` and `info` label one count one
/// way. What is counted is the library's to define (``TokenExpiryState``, ``StoreStatistics``); this is how it reads.
enum StoreCountLabels {
    /// "2 home accounts · 1 app-only token · 3 clients": app-only tokens (client credentials) are no person, so they
    /// are named apart, and only when there are some.
    static func owners(homeAccounts: Int, appOnlyRecords: Int, clients: Int, more: Bool) -> String {
        var parts = [InspectTable.plural(homeAccounts, "home account")]
        if appOnlyRecords > 0 { parts.append(InspectTable.plural(appOnlyRecords, "app-only token")) }
        parts.append("\(ProgressBar.grouped(clients))\(more ? "+" : "") client\(clients == 1 && !more ? "" : "s")")
        return parts.joined(separator: " · ")
    }

    /// "3 valid · 1 refresh due · 2 expired", in the states of ``TokenExpiryState``.
    static func tokenStates(valid: Int, refreshDue: Int, expired: Int) -> String {
        let grouped = ProgressBar.grouped
        return "\(grouped(valid)) valid · \(grouped(refreshDue)) refresh due · \(grouped(expired)) expired"
    }

    /// "1 of 126 reader slots in use, 0 stale": slots held now by a process, stale ones (of processes that are gone)
    /// among them.
    static func readers(_ layout: StoreStatistics.StorageLayout) -> String {
        let grouped = ProgressBar.grouped
        return "\(grouped(layout.readersInUse)) of \(grouped(layout.maxReaders)) reader slots in use, \(grouped(layout.staleReaders)) stale"
            + (layout.staleReaders > 0 ? " (of processes that are gone; the next open clears them)" : "")
    }
}
