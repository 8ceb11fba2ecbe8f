import TokenCache

/// The pieces of `--json` output that several commands share, so that they spell them alike.
extension JSONValue {
    /// Per-kind counts as an object keyed by the kind's name, every kind present (0 when absent).
    static func counts(_ counts: [EntityKind: Int]) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for kind in EntityKind.allCases { object[kind.rawValue] = .integer(Int64(counts[kind] ?? 0)) }
        return .object(object)
    }

    /// A duration in seconds, to the millisecond.
    static func seconds(_ duration: Double) -> JSONValue {
        .double((duration * 1000).rounded() / 1000)
    }
}
