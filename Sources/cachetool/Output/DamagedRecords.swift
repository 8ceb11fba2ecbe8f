import ArgumentParser
import TokenCache

/// Damaged records a read command skipped: each is named by fingerprint on stderr, and the command ends with exit
/// code 65 after printing what it could read, so that a script notices the damage.
enum DamagedRecords {
    static func json(_ records: [CorruptRecord]) -> JSONValue {
        .array(records.map { .object(["kind": .string($0.kind.rawValue), "fingerprint": .string($0.fingerprint), "reason": .string($0.reason)]) })
    }

    /// Warns about every record in `records`; throws exit code 65 if there is any.
    static func report(_ records: [CorruptRecord]) throws {
        for record in records {
            Output.warning("skipped corrupt \(record.kind) record \(record.fingerprint): \(record.reason); it is not shown")
        }
        if !records.isEmpty { throw ExitCode(65) }
    }
}
