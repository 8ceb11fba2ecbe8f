import TokenCache

/// `cachetool inspect --summary`: how many records of each kind the filters select, tokens by expiry state (a refresh
/// token without an expiry counts as valid), and how many home accounts (app-only tokens are none) and clients they
/// belong to: the definitions `stats` counts by (``TokenExpiryState``, ``CacheReader/isAppOnly(_:)``). Reads every selected record once and keeps only counters (and the
/// distinct client ids, up to ``clientLimit``).
struct InspectSummary {
    static let clientLimit = 100_000

    struct Counts: Equatable {
        var total = 0
        var valid = 0
        var refreshDue = 0
        var expired = 0
    }

    let filter: RecordFilter
    let selection: InspectSelection
    let partitions: [HomeAccountPartition]?
    let now: Int64

    private(set) var counts: [EntityKind: Counts] = [:]
    private(set) var homeAccounts = 0
    private(set) var appOnlyRecords = 0
    private(set) var clients: Set<String> = []
    private(set) var clientsOverflowed = false
    private(set) var corrupt: [CorruptRecord] = []

    init(filter: RecordFilter, selection: InspectSelection, partitions: [HomeAccountPartition]?, now: Int64) {
        self.filter = filter
        self.selection = selection
        self.partitions = partitions
        self.now = now
    }

    /// Reads the selected records: the per-account kinds one home account at a time (to count home accounts
    /// without keeping them), then the app metadata.
    mutating func collect(reader: CacheReader, visited: () -> Void) throws {
        let single = filter.homeAccountID.map { reader.partition(homeAccountID: $0) }
        func partition(_ partition: HomeAccountPartition) throws {
            var shown = 0
            func visit<E: CacheEntity>(_ type: E.Type) throws {
                guard selection.kinds.contains(E.kind) else { return }
                try reader.forEach(E.self, in: partition, filter: filter) { result in
                    visited()
                    if add(result) { shown += 1 }
                    return true
                }
            }
            try visit(Account.self)
            try visit(AccessToken.self)
            try visit(RefreshToken.self)
            try visit(IDToken.self)
            // App-only tokens (client credentials) belong to no person: counted apart.
            if reader.isAppOnly(partition) {
                appOnlyRecords += shown
            } else if shown > 0 {
                homeAccounts += 1
            }
        }
        if let partitions = partitions ?? single.map({ [$0] }) {
            for each in partitions { try partition(each) }
        } else {
            try reader.forEachPartition { try partition($0); return true }
        }
        if partitions == nil, single == nil, selection.kinds.contains(.appMetadata) {
            try reader.forEach(AppMetadata.self, filter: filter) { result in
                visited()
                add(result)
                return true
            }
        }
    }

    /// Counts one record if the selection admits it; returns whether it did.
    @discardableResult
    private mutating func add<E: CacheEntity>(_ result: Result<StoredEntity<E>, CorruptRecord>) -> Bool {
        switch result {
        case .failure(let damaged):
            // Each home account and kind is read once: no record is met twice.
            corrupt.append(damaged)
            return false
        case .success(let stored):
            let record = InspectedRecord.of(stored.entity)
            guard selection.admits(record, now: now) else { return false }
            var kindCounts = counts[E.kind] ?? Counts()
            kindCounts.total += 1
            switch record.expiry(now: now) {
            case .valid?: kindCounts.valid += 1
            case .refreshDue?: kindCounts.refreshDue += 1
            case .expired?: kindCounts.expired += 1
            // A refresh token without an expiry is usable until the server says otherwise.
            case nil: if E.kind == .refreshToken { kindCounts.valid += 1 }
            }
            counts[E.kind] = kindCounts
            if let clientID = record.clientID {
                if clients.count < Self.clientLimit {
                    clients.insert(clientID.lowercased())
                } else if !clients.contains(clientID.lowercased()) {
                    clientsOverflowed = true
                }
            }
            return true
        }
    }

    static let kindOrder: [(EntityKind, String, String)] = [
        (.account, "account", "accounts"), (.accessToken, "access token", "access_tokens"),
        (.refreshToken, "refresh token", "refresh_tokens"), (.idToken, "id token", "id_tokens"),
        (.appMetadata, "app metadata", "app_metadata"),
    ]

    /// The summary as a table.
    func lines(style: TextStyle) -> [String] {
        let grouped = ProgressBar.grouped
        var rows: [[String]] = [["KIND", "RECORDS", "VALID", "REFRESH DUE", "EXPIRED"]]
        for (kind, label, _) in Self.kindOrder where selection.kinds.contains(kind) {
            let counts = counts[kind] ?? Counts()
            let expires = kind == .accessToken || kind == .refreshToken
            rows.append([label, grouped(counts.total)] + (expires ? [grouped(counts.valid), grouped(counts.refreshDue), grouped(counts.expired)] : ["", "", ""]))
        }
        rows.append(["damaged", grouped(corrupt.count), "", "", ""])
        var widths = rows[0].map { _ in 0 }
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        var result: [String] = []
        for (rowIndex, row) in rows.enumerated() {
            var line = ""
            for (index, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                var attribute: TextStyle.Attribute? = rowIndex == 0 ? .bold : nil
                if rowIndex > 0, !cell.isEmpty, cell != "0" {
                    if index == 3 { attribute = .yellow }
                    if index == 4 || (index == 1 && row[0] == "damaged") { attribute = .red }
                }
                // Names left-aligned, numbers right-aligned under their headers.
                let text = style.paint(cell, attribute)
                line += (index == 0 ? "" : "  ") + (index == 0 ? text + padding : padding + text)
            }
            result.append(String(line.reversed().drop(while: { $0 == " " }).reversed()))
        }
        result.append("")
        result.append(StoreCountLabels.owners(homeAccounts: homeAccounts, appOnlyRecords: appOnlyRecords, clients: clients.count, more: clientsOverflowed))
        return result
    }

    /// The summary as JSON.
    func json(store: JSONValue) -> JSONValue {
        var records: [String: JSONValue] = [:]
        for (kind, _, name) in Self.kindOrder where selection.kinds.contains(kind) {
            let counts = counts[kind] ?? Counts()
            var object: [String: JSONValue] = ["total": .integer(Int64(counts.total))]
            if kind == .accessToken || kind == .refreshToken {
                object["valid"] = .integer(Int64(counts.valid))
                object["refresh_due"] = .integer(Int64(counts.refreshDue))
                object["expired"] = .integer(Int64(counts.expired))
            }
            records[name] = .object(object)
        }
        return .object([
            "store": store,
            "now": .integer(now),
            "records": .object(records),
            "home_accounts": .integer(Int64(homeAccounts)),
            "app_only_tokens": .integer(Int64(appOnlyRecords)),
            "clients": .integer(Int64(clients.count)),
            "clients_capped": .bool(clientsOverflowed),
            "corrupt_records": DamagedRecords.json(corrupt),
        ])
    }
}
