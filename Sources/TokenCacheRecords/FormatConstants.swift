/// Constants of FORMAT.md v4. Changing any of them changes the bytes on disk.
package enum FormatConstants {
    /// Readers refuse stores whose read version is above this.
    package static let readVersion: UInt16 = 4
    /// Readers that understand the read version but not the write version open read-only.
    package static let writeVersion: UInt16 = 4
    /// The first 8 bytes of the header record.
    package static let headerMagic: [UInt8] = [0x54, 0x4B, 0x43, 0x41, 0x43, 0x48, 0x45, 0x00]  // "TKCACHE\0"
    package static let headerKey: [UInt8] = Array("header".utf8)
    /// Meta record present while lone access tokens are still being moved under their bucket prefix after an
    /// upgrade from version 1 (§7): its value is the key the placement resumes at.
    package static let placementCursorKey: [UInt8] = Array("lone-token-placement".utf8)
    /// Meta record present while records are re-sealed under a new data key (§6.5): its value is where the re-sealing
    /// resumes (a database's index in ``rotatedDatabases`` and a key).
    package static let rotationCursorKey: [UInt8] = Array("data-key-rotation".utf8)
    package static let envelopeVersion: UInt8 = 0x01
    package static let maximumBodyPlaintext = 256 * 1024
    package static let maximumSummaryPlaintext = 64 * 1024
    package static let storeIDCount = 16
    package static let dataKeyCount = 32
    package static let maximumDataKeys = 32
    package static let indexDigestCount = 16
    package static let fingerprintCount = 8

    package static let recordADLabel: [UInt8] = Array("tcache/v1/record".utf8)
    package static let wrapADLabel: [UInt8] = Array("tcache/v1/wrap".utf8)
    /// crypto_kdf context for subkeys of a data key: id 1 record encryption, 2 blind index, 3 fingerprints.
    package static let subkeyContext = "tcacheV1"
    /// crypto_kdf context for the key-encryption key derived from the root key (id 1).
    package static let kekContext = "tcKEKv01"

    /// Section tags in the associated data of a record.
    package static let summarySection: UInt8 = 0x53  // "S"
    package static let bodySection: UInt8 = 0x42  // "B"
}
