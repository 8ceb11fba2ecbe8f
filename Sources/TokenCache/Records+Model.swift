internal import TokenCacheRecords
internal import TokenCacheModel

/// The keyring derives the fingerprints that stored entities carry (the model module sees it only as
/// ``RecordFingerprinting``).
extension Keyring: RecordFingerprinting {}
