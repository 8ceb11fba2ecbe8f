internal import TokenCacheSodium

/// How the root key of a store is obtained (FORMAT.md §6.2).
package enum RootKind: UInt8 {
    /// 32 random bytes from a key file or an environment variable.
    case rawKey = 0x01
    /// Argon2id13 over a passphrase, with the parameters and salt stored in the header.
    case passphrase = 0x02
}

/// One data key, sealed under the key-encryption key, with the cipher its records are sealed with.
package struct WrappedKey: Equatable {
    package var keyID: UInt32
    package var createdAt: Int64
    /// Named in the header from format version 3 on; every data key of an older header is XChaCha20-Poly1305's.
    package var cipher: RecordCipher
    package var nonce: [UInt8]  // 24
    package var sealedKey: [UInt8]  // 32 + 16

    /// Bytes of one wrapped key in a header of `readVersion`: version 3 added the cipher byte.
    package static func encodedCount(readVersion: UInt16) -> Int {
        4 + 8 + (StoreHeader.namesCiphers(readVersion: readVersion) ? 1 : 0) + 24 + 48
    }

    package init(keyID: UInt32, createdAt: Int64, cipher: RecordCipher, nonce: [UInt8], sealedKey: [UInt8]) {
        self.keyID = keyID
        self.createdAt = createdAt
        self.cipher = cipher
        self.nonce = nonce
        self.sealedKey = sealedKey
    }
}

/// The plaintext, checksummed header record `meta/"header"` (FORMAT.md §6.1):
///
/// ```
/// 0    8      magic "TKCACHE\0"
/// 8    u16be  read version
/// 10   u16be  write version
/// 12   16     store id
/// 28   u8     root kind
/// 29   u64be  Argon2id opslimit   (0 for raw keys)
/// 37   u64be  Argon2id memlimit   (0 for raw keys)
/// 45   16     Argon2id salt       (zeros for raw keys)
/// 61   u8     N, number of wrapped data keys (1…32)
/// 62   85·N   wrapped keys: u32be key id ‖ i64be created_at ‖ u8 cipher ‖ nonce[24] ‖ sealed key[48]
/// …    16     checksum = BLAKE2b-128(all preceding bytes)
/// ```
///
/// A header of read version 1 or 2 has no cipher byte (84 bytes a key): its keys are XChaCha20-Poly1305's.
package struct StoreHeader: Equatable {
    package static let fixedPrefixCount = 61
    package static let checksumCount = 16

    package var readVersion: UInt16 = FormatConstants.readVersion
    package var writeVersion: UInt16 = FormatConstants.writeVersion
    package var storeID: [UInt8]
    package var rootKind: RootKind
    package var opsLimit: UInt64 = 0
    package var memLimit: UInt64 = 0
    package var salt: [UInt8] = [UInt8](repeating: 0, count: 16)
    package var wrappedKeys: [WrappedKey] = []

    package init(storeID: [UInt8], rootKind: RootKind) {
        self.storeID = storeID
        self.rootKind = rootKind
    }

    /// Bytes 0..<61: what every wrapped key's associated data authenticates.
    package var fixedPrefix: [UInt8] {
        var bytes = FormatConstants.headerMagic
        withUnsafeBytes(of: readVersion.bigEndian) { bytes += $0 }
        withUnsafeBytes(of: writeVersion.bigEndian) { bytes += $0 }
        bytes += storeID
        bytes.append(rootKind.rawValue)
        withUnsafeBytes(of: opsLimit.bigEndian) { bytes += $0 }
        withUnsafeBytes(of: memLimit.bigEndian) { bytes += $0 }
        bytes += salt
        return bytes
    }

    /// `AD_W = "tcache/v1/wrap" ‖ header[0..<61] ‖ u8(N) ‖ (u32be(id_i) ‖ i64be(created_at_i) [‖ u8(cipher_i)]) for every key ‖ u32be(key id)`
    /// (the cipher from read version 3 on).
    ///
    /// Every wrap authenticates the whole key list, so dropping, adding, re-dating a key (to undo a rotation, say) or
    /// naming another cipher for one (to have records opened with the wrong algorithm) makes every key fail to open.
    package func wrapAssociatedData(keyID: UInt32) -> [UInt8] {
        var ad = FormatConstants.wrapADLabel + fixedPrefix
        ad.append(UInt8(wrappedKeys.count))
        for key in wrappedKeys {
            withUnsafeBytes(of: key.keyID.bigEndian) { ad += $0 }
            withUnsafeBytes(of: key.createdAt.bigEndian) { ad += $0 }
            if namesCiphers { ad.append(key.cipher.rawValue) }
        }
        withUnsafeBytes(of: keyID.bigEndian) { ad += $0 }
        return ad
    }

    /// Whether the header names each data key's cipher (read version 3 on).
    package var namesCiphers: Bool { Self.namesCiphers(readVersion: readVersion) }

    /// Whether a header of `readVersion` names each data key's cipher: from version 3 on.
    package static func namesCiphers(readVersion: UInt16) -> Bool { readVersion >= 3 }

    /// A cipher the header names that this machine cannot run, if any: a store naming one is not opened, nor written,
    /// here (FORMAT.md §6.1).
    package var unavailableCipher: RecordCipher? { wrappedKeys.map(\.cipher).first { !$0.isAvailable } }

    package func encoded() -> [UInt8] {
        // A header that cannot name ciphers says XChaCha20-Poly1305 for every key: writing one with another would make
        // the records under that key unreadable.
        precondition(namesCiphers || wrappedKeys.allSatisfy { $0.cipher == .xchacha20Poly1305 }, "a version-\(readVersion) header names no cipher")
        var bytes = fixedPrefix
        bytes.append(UInt8(wrappedKeys.count))
        for key in wrappedKeys {
            withUnsafeBytes(of: key.keyID.bigEndian) { bytes += $0 }
            withUnsafeBytes(of: key.createdAt.bigEndian) { bytes += $0 }
            if namesCiphers { bytes.append(key.cipher.rawValue) }
            bytes += key.nonce
            bytes += key.sealedKey
        }
        bytes += Self.checksum(bytes)
        return bytes
    }

    package static func checksum(_ bytes: [UInt8]) -> [UInt8] {
        // The output size is a constant within libsodium's bounds, the only condition under which it fails.
        try! GenericHash.hash(bytes, key: nil, outputCount: checksumCount)
    }

    package enum DecodeError: Error {
        /// Not a header of this format at all, or damaged.
        case malformed(String)
        /// A header from a newer format this reader must not interpret.
        case unsupportedVersion(read: UInt16, write: UInt16)
    }

    package static func decode(_ bytes: [UInt8]) throws(DecodeError) -> StoreHeader {
        guard bytes.count >= 12, Array(bytes[0..<8]) == FormatConstants.headerMagic else {
            throw .malformed("the header record does not start with the token-cache magic")
        }
        let readVersion = UInt16(bytes[8]) << 8 | UInt16(bytes[9])
        let writeVersion = UInt16(bytes[10]) << 8 | UInt16(bytes[11])
        // Past the versions, the layout belongs to the read version: check it before interpreting anything.
        guard readVersion <= FormatConstants.readVersion, readVersion >= 1 else {
            throw .unsupportedVersion(read: readVersion, write: writeVersion)
        }
        guard bytes.count >= fixedPrefixCount + 1 + checksumCount else { throw .malformed("the header record is truncated") }
        let count = Int(bytes[fixedPrefixCount])
        let expected = fixedPrefixCount + 1 + count * WrappedKey.encodedCount(readVersion: readVersion) + checksumCount
        guard bytes.count == expected else {
            throw .malformed("the header record has \(bytes.count) bytes where \(count) wrapped keys need \(expected)")
        }
        let body = Array(bytes[..<(expected - checksumCount)])
        guard constantTimeEquals(checksum(body), Array(bytes[(expected - checksumCount)...])) else {
            throw .malformed("the header checksum does not match (the header is damaged)")
        }
        guard (1...FormatConstants.maximumDataKeys).contains(count) else {
            throw .malformed("the header names \(count) data keys (1…\(FormatConstants.maximumDataKeys) allowed)")
        }

        return try bytes.withUnsafeBytes { raw in
            Result { () throws(DecodeError) in
            do {
                var reader = ByteReader(raw)
                _ = try reader.read(count: 12, "magic and versions")
                let storeID = Array(try reader.read(count: FormatConstants.storeIDCount, "store id"))
                let kindByte = try reader.readByte("root kind")
                guard let rootKind = RootKind(rawValue: kindByte) else {
                    throw DecodeError.malformed("unknown root kind 0x\(String(kindByte, radix: 16))")
                }
                var header = StoreHeader(storeID: storeID, rootKind: rootKind)
                header.readVersion = readVersion
                header.writeVersion = writeVersion
                header.opsLimit = try reader.read(UInt64.self, "opslimit")
                header.memLimit = try reader.read(UInt64.self, "memlimit")
                header.salt = Array(try reader.read(count: 16, "salt"))
                if rootKind == .rawKey, header.opsLimit != 0 || header.memLimit != 0 || header.salt.contains(where: { $0 != 0 }) {
                    throw DecodeError.malformed("a raw-key header carries passphrase parameters")
                }
                _ = try reader.readByte("key count")
                var previousID: UInt32 = 0
                for _ in 0..<count {
                    let keyID = try reader.read(UInt32.self, "key id")
                    guard keyID > previousID else { throw DecodeError.malformed("data key ids are not strictly ascending from 1") }
                    previousID = keyID
                    let createdAt = try reader.read(Int64.self, "created_at")
                    var cipher = RecordCipher.xchacha20Poly1305
                    if header.namesCiphers {
                        let byte = try reader.readByte("cipher")
                        guard let named = RecordCipher(rawValue: byte) else {
                            throw DecodeError.malformed("data key \(keyID) names unknown cipher 0x\(String(byte, radix: 16))")
                        }
                        cipher = named
                    }
                    header.wrappedKeys.append(
                        WrappedKey(
                            keyID: keyID,
                            createdAt: createdAt,
                            cipher: cipher,
                            nonce: Array(try reader.read(count: 24, "nonce")),
                            sealedKey: Array(try reader.read(count: 48, "sealed key"))
                        )
                    )
                }
                return header
            } catch let error as DecodeError {
                throw error
            } catch {
                throw .malformed("the header record is truncated")
            }
            }
        }.get()
    }
}
