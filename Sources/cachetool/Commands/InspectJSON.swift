import TokenCache

/// The JSON view of `cachetool inspect`, written record by record as the store is read: one object with the store,
/// `now`, an array per kind (MSAL field names, as `export` writes them, plus `revision` and `fingerprint`; a field
/// the record does not have is absent, as in MSAL's own caches), and the damaged records by fingerprint.
///
/// Only the damaged records are kept until the end; every other record is written and forgotten.
struct InspectJSON {
    let filter: RecordFilter
    let selection: InspectSelection
    /// The partitions shown, when `--username` narrowed them; nil for all.
    let partitions: [HomeAccountPartition]?
    let revealSecrets: Bool
    let limit: Int?
    let now: Int64

    private(set) var corrupt: [CorruptRecord] = []
    private(set) var shown = 0

    init(filter: RecordFilter, selection: InspectSelection, partitions: [HomeAccountPartition]?, revealSecrets: Bool, limit: Int?, now: Int64) {
        self.filter = filter
        self.selection = selection
        self.partitions = partitions
        self.revealSecrets = revealSecrets
        self.limit = limit
        self.now = now
    }

    /// `--limit` records are written and at least one more matches: the walk stopped there.
    private(set) var truncated = false
    private var limitReached: Bool { limit.map { shown >= $0 } ?? false }

    mutating func render(reader: CacheReader, store: JSONValue, output: StreamOutput, visited: () -> Void) throws {
        try output.line("{")
        try output.line("  \"store\" : " + store.prettyPrinted(indent: 2) + ",")
        try output.line("  \"now\" : \(now),")
        try array("accounts", Account.self, reader: reader, output: output, visited: visited)
        try array("access_tokens", AccessToken.self, reader: reader, output: output, visited: visited)
        try array("refresh_tokens", RefreshToken.self, reader: reader, output: output, visited: visited)
        try array("id_tokens", IDToken.self, reader: reader, output: output, visited: visited)
        try array("app_metadata", AppMetadata.self, reader: reader, output: output, visited: visited)
        let damaged = DamagedRecords.json(corrupt).prettyPrinted(indent: 2)
        if let limit {
            try output.line("  \"corrupt_records\" : " + damaged + ",")
            try output.line("  \"limit\" : \(limit),")
            try output.line("  \"truncated\" : \(truncated)")
        } else {
            try output.line("  \"corrupt_records\" : " + damaged)
        }
        try output.line("}")
        try output.flush()
    }

    /// `"name" : [ ... ],` with the kind's shown records (`[]` for none, as the pretty printer writes an empty array).
    /// Each element is held back until the next one (or the end) shows whether it needs a comma.
    private mutating func array<E: CacheEntity>(
        _ name: String, _ type: E.Type, reader: CacheReader, output: StreamOutput, visited: () -> Void
    ) throws {
        var pending: String? = nil
        var opened = false
        func visit(_ result: Result<StoredEntity<E>, CorruptRecord>) throws -> Bool {
            visited()
            switch result {
            case .failure(let damaged):
                // Each kind is read once (the partitions of `--username` are distinct): no record is met twice.
                corrupt.append(damaged)
                return true
            case .success(let stored):
                guard selection.admits(InspectedRecord.of(stored.entity), now: now) else { return true }
                if limitReached {
                    truncated = true
                    return false
                }
                var object = stored.entity.jsonObject(revealSecrets: revealSecrets)
                object["revision"] = .integer(Int64(stored.revision))
                object["fingerprint"] = .string(stored.fingerprint)
                if let previous = pending { try output.line(previous + ",") }
                if !opened {
                    try output.line("  \"\(name)\" : [")
                    opened = true
                }
                pending = "    " + JSONValue.object(object).prettyPrinted(indent: 4)
                shown += 1
                return true
            }
        }
        if !truncated, selection.kinds.contains(E.kind), !(E.self == AppMetadata.self && partitions != nil) {
            if let partitions {
                for partition in partitions where !truncated {
                    try reader.forEach(E.self, in: partition, filter: filter) { try visit($0) }
                }
            } else {
                try reader.forEach(E.self, filter: filter) { try visit($0) }
            }
        }
        if let pending {
            try output.line(pending)
            try output.line("  ],")
        } else {
            try output.line("  \"\(name)\" : [],")
        }
    }
}

extension InspectedRecord {
    /// The inspected form of any entity.
    static func of<E: CacheEntity>(_ entity: E) -> InspectedRecord {
        switch entity {
        case let account as Account: InspectedRecord(account)
        case let token as AccessToken: InspectedRecord(token)
        case let token as RefreshToken: InspectedRecord(token)
        case let token as IDToken: InspectedRecord(token)
        case let metadata as AppMetadata: InspectedRecord(metadata)
        default: preconditionFailure("cachetool: an entity kind inspect does not know: \(E.kind)")
        }
    }
}
