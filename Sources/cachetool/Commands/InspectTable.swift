import TokenCache

/// The table view of `cachetool inspect`: people first, each followed by their credentials, printed as they are read.
///
/// Order: the accounts by username (case-insensitively; those without one by home account id), then the tokens of
/// home accounts that have no Account record (app-only tokens among them), then the per-client app metadata. Sorting
/// the accounts needs one small entry per account in memory; a store of more than ``sortedAccountLimit`` Account
/// records is shown in storage order instead, so that memory stays bounded however large the store.
///
/// Each person's line counts what is shown under it, so a person's credentials are read before the line is printed:
/// up to ``groupBufferLimit`` rows are kept for that, and a larger group is read twice (once to count, once to
/// print) rather than kept.
final class InspectTable {
    static let sortedAccountLimit = 50_000
    static let groupBufferLimit = 2_048
    /// Pages of the store's map are let go after this many records (see ``CacheReader/releaseScannedPages()``). The
    /// kernel maps up to 16 neighbouring cached pages on each fault, so a walk that jumps between home accounts
    /// touches about 25 KiB per record: 512 records keep that near 12 MiB.
    static let recordsPerPageRelease = 512

    struct Settings {
        var filter: RecordFilter
        var selection: InspectSelection
        /// Only these home accounts (those `--username` names, in storage order), without the app metadata.
        var partitions: [HomeAccountPartition]?
        var wide: Bool
        var revealSecrets: Bool
        var limit: Int?
        var now: Int64
        var style: TextStyle
        var width: Int?
    }

    let settings: Settings
    let layout: ColumnLayout
    private let output: StreamOutput
    /// Called for every record read (progress, and the release of scanned pages).
    private let visited: () -> Void
    /// Records shown so far.
    private(set) var shown = 0
    /// `--limit` records are shown and at least one more matches: the walk stopped there.
    private(set) var truncated = false
    private var limitReached: Bool { settings.limit.map { shown >= $0 } ?? false }
    private(set) var corrupt: [CorruptRecord] = []

    init(settings: Settings, output: StreamOutput, visited: @escaping () -> Void) {
        self.settings = settings
        self.output = output
        self.visited = visited
        layout = ColumnLayout(columns: Self.columns(wide: settings.wide), indent: 2, width: settings.wide ? nil : settings.width)
    }

    static func columns(wide: Bool) -> [ColumnLayout.Column] {
        typealias Column = ColumnLayout.Column
        if wide {
            return [
                Column(header: "KIND", minimum: 7, preferred: 7),
                Column(header: "CLIENT", minimum: 36, preferred: 36),
                Column(header: "TENANT", minimum: 36, preferred: 36),
                Column(header: "ENVIRONMENT", minimum: 25, preferred: 25),
                Column(header: "EXPIRES", minimum: 22, preferred: 22),
                Column(header: "FINGERPRINT", minimum: 16, preferred: 16),
                Column(header: "SCOPES", minimum: 6, preferred: 6),
            ]
        }
        // By what they hold: an expiry reads whole in 15 cells ("expired 2 h ago"; a refresh-due one says only that
        // when narrower than its full text), scopes are the longest text and grow first; identifiers are told apart
        // by their ends in 13 cells and grow last.
        return [
            Column(header: "KIND", minimum: 7, preferred: 7),
            Column(header: "CLIENT", minimum: 13, preferred: 36, cut: .middle, growth: 3),
            Column(header: "TENANT", minimum: 13, preferred: 36, cut: .middle, growth: 4),
            Column(header: "EXPIRES", minimum: 15, preferred: 22, growth: 2),
            Column(header: "SCOPES", minimum: 10, preferred: 30, cut: .words, growth: 1),
        ]
    }

    // MARK: Walking the store

    /// Prints the heading (already escaped and cut to the width), the column header, every group and the app metadata.
    func render(reader: CacheReader, heading: String) throws {
        try output.line(settings.style.paint(heading, .bold))
        try output.line("")
        try output.line(layout.headerLine(style: settings.style))
        if let homeAccountID = settings.filter.homeAccountID {
            try group(reader.partition(homeAccountID: homeAccountID), reader: reader)
        } else if let partitions = settings.partitions {
            // One username: its accounts sort by nothing else.
            for partition in partitions where !truncated { try group(partition, reader: reader) }
        } else if try reader.counts()[.account] ?? 0 > Self.sortedAccountLimit {
            // Storage order, straight from the keys: nothing per account is kept.
            try eachPartition(reader) { try group($0, reader: reader) }
        } else {
            let people = try sortedPeople(reader)
            for partition in people {
                guard !truncated else { break }
                try group(partition, reader: reader)
            }
            // Then the home accounts without an Account record, app-only tokens among them.
            let known = Set(people)
            try eachPartition(reader) { partition in
                if !known.contains(partition) { try group(partition, reader: reader) }
            }
        }
        if !truncated, settings.filter.homeAccountID == nil, settings.partitions == nil,
            settings.selection.kinds.contains(.appMetadata)
        {
            try appMetadata(reader)
        }
        try output.flush()
    }

    /// Calls `body` with every partition in storage order until the output is cut by `--limit`.
    private func eachPartition(_ reader: CacheReader, _ body: (HomeAccountPartition) throws -> Void) throws {
        var seen = 0
        try reader.forEachPartition { partition in
            try body(partition)
            seen += 1
            // The positioned reads of the walk touch pages too.
            if seen % 64 == 0 { reader.releaseScannedPages() }
            return !truncated
        }
    }

    /// The partitions of the accounts, by username: one pass over the Account records, keeping one sort key per home
    /// account.
    private func sortedPeople(_ reader: CacheReader) throws -> [HomeAccountPartition] {
        var people: [HomeAccountPartition: (key: String, fromHomeProfile: Bool)] = [:]
        try reader.forEach(Account.self) { result in
            visited()
            guard case .success(let stored) = result, let partition = reader.partition(of: stored) else { return true }
            let account = stored.entity
            // As the person's line is labelled: the username of the home profile, else of any profile, else the
            // home account id (sorted after every username).
            let isHome = Self.isHomeProfile(account)
            let key = account.username.flatMap { $0.isEmpty ? nil : "0" + $0.lowercased() } ?? "1" + account.homeAccountID.lowercased()
            if let current = people[partition], current.fromHomeProfile || (current.key < "1" && key >= "1") { return true }
            people[partition] = (key, isHome)
            return true
        }
        return people.sorted { ($0.value.key, $0.key) < ($1.value.key, $1.key) }.map(\.key)
    }

    /// Whether `account` is the profile of the account's home tenant (`<object id>.<tenant id>`).
    private static func isHomeProfile(_ account: Account) -> Bool {
        homeTenant(account.homeAccountID).map { $0.lowercased() == account.realm.lowercased() } ?? false
    }

    /// The tenant part of an Entra home account id, `<object id>.<tenant id>`.
    static func homeTenant(_ homeAccountID: String) -> String? {
        guard let dot = homeAccountID.lastIndex(of: "."), homeAccountID.index(after: dot) < homeAccountID.endIndex else { return nil }
        return String(homeAccountID[homeAccountID.index(after: dot)...])
    }

    // MARK: One group

    /// What a person's line says about what is shown under it.
    private struct GroupFacts {
        var homeAccountID: String?
        var username: String?
        var profiles = 0
        var clients: Set<String> = []
        var nextExpiry: Int64? = nil
        var accessTokens = 0
        var expiredAccessTokens = 0
        var rows = 0

        mutating func add(_ record: InspectedRecord, now: Int64) {
            rows += 1
            if let clientID = record.clientID { clients.insert(clientID.lowercased()) }
            if record.kind == .accessToken, let expiresOn = record.expiresOn {
                accessTokens += 1
                if expiresOn <= now {
                    expiredAccessTokens += 1
                } else {
                    nextExpiry = min(nextExpiry ?? .max, expiresOn)
                }
            }
        }
    }

    /// A record's lines (its row and, with `--include-secrets`, the secret line under it), and where it sorts in its
    /// group: by kind (profiles, access, refresh, ID tokens), then client, tenant, environment and scopes, so that the
    /// same store always prints the same way (storage order follows keyed hashes, different in every store).
    private struct Row {
        var order: [String]
        var lines: [String]

        init(_ record: InspectedRecord, lines: [String]) {
            let kind = [EntityKind.account, .accessToken, .refreshToken, .idToken, .appMetadata].firstIndex(of: record.kind) ?? 5
            order = [String(kind), record.clientID ?? "", record.realm ?? "", record.environment, record.target ?? record.username ?? ""]
                .map { $0.lowercased() }
            self.lines = lines
        }
    }

    private func group(_ partition: HomeAccountPartition, reader: CacheReader) throws {
        if limitReached {
            // Only whether anything more matches.
            try records(in: partition, reader: reader) { _, _ in
                truncated = true
                return false
            }
            return
        }
        var facts = GroupFacts()
        // The profiles, for the person's line, whatever the filters (the rows are filtered below).
        try reader.forEach(Account.self, in: partition) { result in
            if case .success(let stored) = result {
                facts.profiles += 1
                facts.homeAccountID = facts.homeAccountID ?? stored.entity.homeAccountID
                if facts.username == nil || Self.isHomeProfile(stored.entity), let username = stored.entity.username, !username.isEmpty {
                    facts.username = username
                }
            }
            return true
        }
        var buffered: [Row] = []
        var overflowed = false
        let budget = settings.limit.map { $0 - shown }
        try records(in: partition, reader: reader) { record, fingerprint in
            facts.homeAccountID = facts.homeAccountID ?? record.homeAccountID
            // At the limit, one more record shows that the limit cuts the output; the person's line counts what is
            // shown.
            if let budget, facts.rows == budget {
                truncated = true
                return false
            }
            facts.add(record, now: settings.now)
            if !overflowed {
                buffered.append(Row(record, lines: lines(record, fingerprint: fingerprint())))
                if buffered.count > Self.groupBufferLimit {
                    overflowed = true
                    buffered = []
                }
            }
            return true
        }
        guard facts.rows > 0 else { return }
        if shown > 0 { try output.line("") }
        try output.line(personLine(facts))
        if overflowed {
            var printed = 0
            try records(in: partition, reader: reader) { record, fingerprint in
                for line in lines(record, fingerprint: fingerprint()) { try output.line(line) }
                printed += 1
                return printed < facts.rows
            }
        } else {
            for row in buffered.sorted(by: { $0.order.lexicographicallyPrecedes($1.order) }) {
                for line in row.lines { try output.line(line) }
            }
        }
        shown += facts.rows
        try output.groupEnded()
    }

    /// Visits the shown records of a partition, in kind order (tenant profiles, access, refresh, ID tokens), until
    /// `body` returns false.
    private func records(
        in partition: HomeAccountPartition, reader: CacheReader, _ body: (InspectedRecord, () -> String) throws -> Bool
    ) throws {
        var going = true
        func visit<E: CacheEntity>(_ type: E.Type, _ make: (E) -> InspectedRecord) throws {
            guard going, settings.selection.kinds.contains(E.kind) else { return }
            try reader.forEach(E.self, in: partition, filter: settings.filter) { result in
                visited()
                switch result {
                case .failure(let damaged):
                    noteCorrupt(damaged)
                    return true
                case .success(let stored):
                    let record = make(stored.entity)
                    guard settings.selection.admits(record, now: settings.now) else { return true }
                    going = try body(record, { stored.fingerprint })
                    return going
                }
            }
        }
        try visit(Account.self, InspectedRecord.init)
        try visit(AccessToken.self, InspectedRecord.init)
        try visit(RefreshToken.self, InspectedRecord.init)
        try visit(IDToken.self, InspectedRecord.init)
    }

    /// A damaged record once, however many times the walk meets it (a group read twice meets it twice).
    private func noteCorrupt(_ damaged: CorruptRecord) {
        if !corrupt.contains(damaged) { corrupt.append(damaged) }
    }

    /// The app metadata, sorted as a group's rows (in storage order past ``groupBufferLimit`` records).
    private func appMetadata(_ reader: CacheReader) throws {
        var buffered: [Row] = []
        var streaming = false
        let separated = shown > 0
        func heading() throws {
            if separated { try output.line("") }
            try output.line(settings.style.paint("Apps", .bold) + settings.style.paint("  (metadata per client)", .dim))
        }
        try reader.forEach(AppMetadata.self, filter: settings.filter) { result in
            visited()
            switch result {
            case .failure(let damaged):
                noteCorrupt(damaged)
            case .success(let stored):
                let record = InspectedRecord(stored.entity)
                guard settings.selection.admits(record, now: settings.now) else { return true }
                if limitReached {
                    truncated = true
                    return false
                }
                let row = Row(record, lines: lines(record, fingerprint: stored.fingerprint))
                shown += 1
                if streaming {
                    for line in row.lines { try output.line(line) }
                } else {
                    buffered.append(row)
                    if buffered.count > Self.groupBufferLimit {
                        streaming = true
                        try heading()
                        for line in buffered.flatMap(\.lines) { try output.line(line) }
                        buffered = []
                    }
                }
            }
            return true
        }
        if !buffered.isEmpty {
            try heading()
            for row in buffered.sorted(by: { $0.order.lexicographicallyPrecedes($1.order) }) {
                for line in row.lines { try output.line(line) }
            }
        }
    }

    // MARK: Lines

    private func personLine(_ facts: GroupFacts) -> String {
        let style = settings.style
        let label: String
        var notes: [(String, TextStyle.Attribute?)] = []
        if let username = facts.username {
            label = username
        } else if let homeAccountID = facts.homeAccountID, !homeAccountID.isEmpty {
            label = homeAccountID
        } else {
            label = "(app-only tokens: no account)"
        }
        if facts.profiles == 0, let homeAccountID = facts.homeAccountID, !homeAccountID.isEmpty {
            notes.append(("no account record", .yellow))
        }
        if settings.wide, facts.username != nil, let homeAccountID = facts.homeAccountID {
            notes.append(("home account " + homeAccountID, nil))
        } else if let tenant = facts.homeAccountID.flatMap(Self.homeTenant) {
            // Cut as the TENANT column cuts it, so the rest of the line fits too.
            let shown = settings.wide || settings.width == nil ? tenant : DisplayWidth.truncated(tenant, to: 13, cut: .middle)
            notes.append(("home tenant " + shown, nil))
        }
        if facts.profiles > 0 { notes.append((Self.plural(facts.profiles, "profile"), nil)) }
        if !facts.clients.isEmpty { notes.append((Self.plural(facts.clients.count, "client"), nil)) }
        if let next = facts.nextExpiry {
            notes.append(("next expiry " + RelativeTime.describe(next, now: settings.now), nil))
        } else if facts.accessTokens > 0 {
            notes.append(((facts.accessTokens == 1 ? "access token" : "all access tokens") + " expired", .red))
        }
        // Cut to the width: the label first (at most the whole line), then the notes in order.
        let width = settings.wide ? nil : settings.width
        var budget = width ?? .max
        let labelText = width.map { DisplayWidth.truncated(Terminal.sanitize(label), to: $0, cut: .end) } ?? Terminal.sanitize(label)
        budget -= DisplayWidth.columns(labelText)
        var line = style.paint(labelText, .bold)
        // A note is shown whole or not at all (with those after it): a cut one reads as a broken word.
        for (index, note) in notes.enumerated() {
            let separator = index == 0 ? "  " : " · "
            let text = Terminal.sanitize(note.0)
            guard separator.count + DisplayWidth.columns(text) <= budget else { break }
            budget -= separator.count + DisplayWidth.columns(text)
            line += style.paint(separator, .dim) + style.paint(text, note.1 ?? .dim)
        }
        return line
    }

    static func plural(_ count: Int, _ noun: String) -> String { "\(ProgressBar.grouped(count)) \(noun)\(count == 1 ? "" : "s")" }

    /// The row of a record, then (with `--include-secrets`) its secret on a line of its own.
    private func lines(_ record: InspectedRecord, fingerprint: @autoclosure () -> String) -> [String] {
        typealias Cell = ColumnLayout.Cell
        let kind: String
        switch record.kind {
        case .account: kind = "account"
        // A token of another type than Bearer is named by its type (`pop`, `ssh-cert`).
        case .accessToken: kind = record.tokenType?.lowercased() ?? "access"
        case .refreshToken: kind = "refresh"
        case .idToken: kind = "id"
        case .appMetadata: kind = "app"
        }
        var expires = Cell("-")
        if let expiresOn = record.expiresOn, let state = record.expiry(now: settings.now) {
            let text = RelativeTime.describe(expiresOn, now: settings.now)
            switch state {
            case .valid: expires = Cell(text)
            case .refreshDue: expires = Cell(text + ", refresh due", .yellow, short: "refresh due")
            case .expired: expires = Cell(text, .red)
            }
        }
        var scopes: [Cell] = []
        if let familyID = record.familyID { scopes.append(Cell("family " + familyID, .magenta)) }
        if let target = record.target, !target.isEmpty { scopes.append(Cell(target)) }
        if record.kind == .account, let username = record.username, !username.isEmpty { scopes.append(Cell(username, .dim)) }
        // One cell for the last column: its parts joined, coloured as its first part.
        let last = Cell(scopes.isEmpty ? "-" : scopes.map { Terminal.sanitize($0.text) }.joined(separator: " "), scopes.first?.attribute)
        var cells = [
            Cell(kind),
            Cell(Terminal.sanitize(record.clientID ?? "-")),
            Cell(Terminal.sanitize(record.realm ?? "-")),
        ]
        if settings.wide { cells.append(Cell(Terminal.sanitize(record.environment))) }
        cells.append(expires)
        if settings.wide { cells.append(Cell(fingerprint(), .dim)) }
        cells.append(last)
        var result = [layout.line(cells, style: settings.style)]
        if settings.revealSecrets, let secret = record.secret {
            result.append(String(repeating: " ", count: layout.indent + 2) + settings.style.paint("secret", .dim) + " " + Terminal.sanitize(secret.reveal()))
        }
        return result
    }
}
