internal import TokenCacheRecords

/// Where a record was read from; enough to name it by fingerprint later.
struct RecordLocation: Sendable {
    let keyring: Keyring
    let database: String
    let key: [UInt8]

    var fingerprint: String { keyring.fingerprint(database: database, key: key) }
}
