package import TokenCacheSodium

/// The place a record is bound to: its store, named database and exact LMDB key (FORMAT.md §5.2).
/// A ciphertext moved to any other slot fails authentication.
package struct RecordSlot {
    package let storeID: [UInt8]
    package let database: String
    package let key: [UInt8]

    package init(storeID: [UInt8], database: String, key: [UInt8]) {
        self.storeID = storeID
        self.database = database
        self.key = key
    }
}

/// Nonces supplied by a caller instead of drawn at random. Only test vectors use this.
package struct FixedNonces {
    package var summary: [UInt8]?
    package var body: [UInt8]

    package init(summary: [UInt8]?, body: [UInt8]) {
        self.summary = summary
        self.body = body
    }
}

/// The sealed value of a record (FORMAT.md §5.1):
///
/// ```
/// 0   u8     envelope version (0x01)
/// 1   u32be  data key id
/// 5   u32be  S = length of the summary section (0 = none)
/// 9   S      summary section: nonce[24] ‖ Seal(summary plaintext) ‖ tag[16]
/// 9+S …      body section:    nonce[24] ‖ Seal(body plaintext) ‖ tag[16]
/// ```
///
/// `Seal` is the cipher of the named data key (``RecordCipher``): XChaCha20-Poly1305, whose nonce is the 24 bytes, or
/// AES-256-GCM, for which they are the seed of a one-message key (``AES256GCM``). A section is the same size under both.
package enum RecordEnvelope {
    package static let headerCount = 9
    package static let sectionOverhead = nonceByteCount + XChaCha20Poly1305.tagByteCount
    /// The nonce (or seal seed) in front of each section's ciphertext: the same 24 bytes for either cipher.
    package static let nonceByteCount = XChaCha20Poly1305.nonceByteCount

    package enum Section {
        case summary
        case body
    }

    package static func sealedCount(summaryPlaintext: Int?, bodyPlaintext: Int) -> Int {
        headerCount + (summaryPlaintext.map { $0 + sectionOverhead } ?? 0) + bodyPlaintext + sectionOverhead
    }

    /// `AD = "tcache/v1/record" ‖ store_id ‖ u32be(len db) ‖ db ‖ u32be(len key) ‖ key ‖ version ‖ u32be(key id) ‖ section [‖ summary section]`
    ///
    /// The body's associated data holds the whole sealed summary section (nonce, ciphertext, tag), so that a
    /// reader that opens only the body still detects a change to any byte of the record.
    package static func associatedData(slot: RecordSlot, keyID: UInt32, section: UInt8, summarySection: UnsafeRawBufferPointer?) -> [UInt8] {
        slot.key.withUnsafeBytes { key in
            withAssociatedData(
                storeID: slot.storeID, database: slot.database, key: key, keyID: keyID, section: section, summarySection: summarySection
            ) { Array($0) }
        }
    }

    /// The associated data built in a temporary (stack) buffer and lent to `body`: reads allocate nothing for it.
    package static func withAssociatedData<R, E: Error>(
        storeID: [UInt8], database: String, key: UnsafeRawBufferPointer, keyID: UInt32, section: UInt8,
        summarySection: UnsafeRawBufferPointer?, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let label = FormatConstants.recordADLabel
        let count = label.count + storeID.count + 4 + database.utf8.count + 4 + key.count + 1 + 4 + 1 + (summarySection?.count ?? 0)
        return try withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { buffer throws(E) -> R in
            var writer = ByteWriter(buffer)
            label.withUnsafeBytes { writer.write($0) }
            storeID.withUnsafeBytes { writer.write($0) }
            writer.write(bigEndian: UInt32(database.utf8.count))
            var database = database
            database.withUTF8 { writer.write(UnsafeRawBufferPointer($0)) }
            writer.write(bigEndian: UInt32(key.count))
            writer.write(key)
            writer.write(FormatConstants.envelopeVersion)
            writer.write(bigEndian: keyID)
            writer.write(section)
            if let summarySection { writer.write(summarySection) }
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Seals `summary` (optional) and `body` into `output`, which must hold exactly `sealedCount` bytes.
    package static func seal(
        summary: UnsafeRawBufferPointer?, body: UnsafeRawBufferPointer, slot: RecordSlot, keyID: UInt32, key: RecordKey,
        into output: UnsafeMutableRawBufferPointer, nonces: FixedNonces? = nil
    ) throws {
        precondition(output.count == sealedCount(summaryPlaintext: summary?.count, bodyPlaintext: body.count))
        var writer = ByteWriter(output)
        writer.write(FormatConstants.envelopeVersion)
        writer.write(bigEndian: keyID)
        writer.write(bigEndian: UInt32(summary.map { $0.count + sectionOverhead } ?? 0))

        var summarySection: UnsafeRawBufferPointer? = nil
        if let summary {
            let sectionStart = writer.position
            let nonce = writer.reserve(nonceByteCount)
            fillNonce(nonce, nonces?.summary)
            let sealed = writer.reserve(summary.count + XChaCha20Poly1305.tagByteCount)
            let ad = associatedData(slot: slot, keyID: keyID, section: FormatConstants.summarySection, summarySection: nil)
            try ad.withUnsafeBytes { ad in
                try key.seal(summary, associatedData: ad, nonce: UnsafeRawBufferPointer(nonce), into: sealed)
            }
            summarySection = UnsafeRawBufferPointer(rebasing: output[sectionStart..<writer.position])
        }
        let nonce = writer.reserve(nonceByteCount)
        fillNonce(nonce, nonces?.body)
        let sealed = writer.reserve(body.count + XChaCha20Poly1305.tagByteCount)
        let ad = associatedData(slot: slot, keyID: keyID, section: FormatConstants.bodySection, summarySection: summarySection)
        try ad.withUnsafeBytes { ad in
            try key.seal(body, associatedData: ad, nonce: UnsafeRawBufferPointer(nonce), into: sealed)
        }
    }

    private static func fillNonce(_ nonce: UnsafeMutableRawBufferPointer, _ fixed: [UInt8]?) {
        if let fixed {
            precondition(fixed.count == nonce.count, "a fixed nonce must be 24 bytes")
            nonce.copyBytes(from: fixed)
        } else {
            Random.fill(nonce)
        }
    }

    /// The data key id a value names (§5.1, bytes 1 to 4), without any other check; nil for a value too short to hold
    /// one or of another envelope version.
    package static func keyID(of value: UnsafeRawBufferPointer) -> UInt32? {
        guard value.count >= headerCount, value[0] == FormatConstants.envelopeVersion else { return nil }
        return UInt32(value[1]) << 24 | UInt32(value[2]) << 16 | UInt32(value[3]) << 8 | UInt32(value[4])
    }

    private struct Parsed {
        package let keyID: UInt32
        package let summary: UnsafeRawBufferPointer?
        package let body: UnsafeRawBufferPointer
    }

    /// Structural checks, all before any decryption: version, lengths within the format's limits.
    private static func parse(_ value: UnsafeRawBufferPointer) throws(FormatError) -> Parsed {
        // The order of checks is FORMAT.md §5.1's: version, header length, S, B (the key id is checked by `open`).
        if let version = value.first, version != FormatConstants.envelopeVersion {
            throw FormatError("unsupported envelope version \(version)", kind: .unsupportedVersion)
        }
        guard value.count >= headerCount else {
            throw FormatError("record of \(value.count) bytes is shorter than its header", kind: .lengthOutOfRange)
        }
        var reader = ByteReader(value)
        do {
            _ = try reader.readByte("envelope version")
            let keyID = try reader.read(UInt32.self, "data key id")
            let summaryLength = Int(try reader.read(UInt32.self, "summary length"))
            var summary: UnsafeRawBufferPointer? = nil
            if summaryLength != 0 {
                guard summaryLength >= sectionOverhead, summaryLength - sectionOverhead <= FormatConstants.maximumSummaryPlaintext,
                    summaryLength <= reader.remaining
                else { throw FormatError("summary length \(summaryLength) is out of range", kind: .lengthOutOfRange) }
                summary = try reader.read(count: summaryLength, "summary section")
            }
            let body = reader.readRest()
            guard body.count >= sectionOverhead, body.count - sectionOverhead <= FormatConstants.maximumBodyPlaintext else {
                throw FormatError("body length \(body.count) is out of range", kind: .lengthOutOfRange)
            }
            return Parsed(keyID: keyID, summary: summary, body: body)
        } catch {
            throw FormatError((error as? FormatError)?.message ?? "malformed envelope", kind: .lengthOutOfRange)
        }
    }

    /// A section located in a value whose envelope passed the structural checks and whose key id is known: what a
    /// reader needs to size its output buffer before ``decrypt(_:storeID:database:key:into:)``.
    package struct Located {
        package let keyID: UInt32
        package let key: RecordKey
        package let tag: UInt8
        package let sealed: UnsafeRawBufferPointer
        /// The summary section, which the body's associated data covers.
        package let coveredSummary: UnsafeRawBufferPointer?

        package var plaintextCount: Int { sealed.count - sectionOverhead }
    }

    /// Structural checks and key lookup, before any decryption; nil when the summary is asked for and there is none.
    package static func locate(
        _ section: Section, of value: UnsafeRawBufferPointer, keys: (UInt32) -> RecordKey?
    ) throws(FormatError) -> Located? {
        let parsed = try parse(value)
        guard let key = keys(parsed.keyID) else {
            throw FormatError("unknown data key id \(parsed.keyID)", kind: .unknownKeyID)
        }
        switch section {
        case .summary:
            guard let summary = parsed.summary else { return nil }
            return Located(keyID: parsed.keyID, key: key, tag: FormatConstants.summarySection, sealed: summary, coveredSummary: nil)
        case .body:
            return Located(keyID: parsed.keyID, key: key, tag: FormatConstants.bodySection, sealed: parsed.body, coveredSummary: parsed.summary)
        }
    }

    /// Authenticates and decrypts a located section into `output` (exactly `plaintextCount` bytes).
    package static func decrypt(
        _ located: Located, storeID: [UInt8], database: String, key: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(FormatError) {
        let nonce = UnsafeRawBufferPointer(rebasing: located.sealed[..<nonceByteCount])
        let ciphertext = UnsafeRawBufferPointer(rebasing: located.sealed[nonceByteCount...])
        let authenticated = withAssociatedData(
            storeID: storeID, database: database, key: key, keyID: located.keyID, section: located.tag,
            summarySection: located.coveredSummary
        ) { ad -> SodiumError.Code? in
            do throws(SodiumError) {
                try located.key.open(ciphertext, associatedData: ad, nonce: nonce, into: output)
                return nil
            } catch {
                return error.code
            }
        }
        switch authenticated {
        case nil: return
        case .unavailable?:
            throw FormatError("sealed with \(located.key.cipher), which this machine cannot run", kind: .unavailableCipher)
        default: throw FormatError("authentication failed", kind: .authenticationFailure)
        }
    }

    /// Authenticates and decrypts one section into a zeroizing buffer. Returns nil when the summary is asked for
    /// and the record has none.
    package static func open(
        _ section: Section, of value: UnsafeRawBufferPointer, slot: RecordSlot, keys: (UInt32) -> RecordKey?
    ) throws(FormatError) -> SecureBuffer? {
        guard let located = try locate(section, of: value, keys: keys) else { return nil }
        let plaintext = SecureBuffer(count: located.plaintextCount)
        try plaintext.withUnsafeMutableBytes { output in
            slot.key.withUnsafeBytes { key in
                Result { () throws(FormatError) in
                    try decrypt(located, storeID: slot.storeID, database: slot.database, key: key, into: output)
                }
            }
        }.get()
        return plaintext
    }
}

/// The body of a record: `schema u8 ‖ revision u64be ‖ updated_at i64be ‖ field map` (FORMAT.md §5.3). Written in
/// schema 2 (compact: field ids, varint lengths, the token's segments decoded); schema 1 (names written out) is read.
package struct RecordBody {
    package static let headerCount = 1 + 8 + 8

    package var revision: UInt64
    package var updatedAt: Int64
    package var fields: FieldMap

    package init(revision: UInt64, updatedAt: Int64, fields: FieldMap) {
        self.revision = revision
        self.updatedAt = updatedAt
        self.fields = fields
    }

    /// Schema 2 stores every field but `credential_type`, which the record's database already names (readers of
    /// either schema ignore it).
    package var encodedCount: Int { Self.headerCount + fields.compactEncodedCount(omittingCredentialType: true) }

    package func encode() -> SecureBuffer {
        let buffer = SecureBuffer(count: encodedCount)
        buffer.withUnsafeMutableBytes { bytes in
            var writer = ByteWriter(bytes)
            writer.write(FieldType.compactSchema)
            writer.write(bigEndian: revision)
            writer.write(bigEndian: updatedAt)
            fields.encodeCompact(into: &writer, omittingCredentialType: true)
            precondition(writer.remaining == 0, "a body's size was miscounted")
        }
        return buffer
    }

    /// The whole body of a decrypted plaintext, of either schema (tests, transcoding).
    package static func decode(_ plaintext: UnsafeRawBufferPointer) throws(FormatError) -> RecordBody {
        let decoded = try DecodedBody(borrowing: plaintext)
        return RecordBody(revision: decoded.revision, updatedAt: decoded.updatedAt, fields: decoded.fields.fieldMap)
    }

    /// A body of schema 1 re-encoded in schema 2, with the same revision, time and fields; nil for a body already in
    /// schema 2. What a record's re-sealing writes (FORMAT.md §7: the upgrade to version 4).
    package static func upgraded(_ plaintext: SecureBuffer) throws(FormatError) -> SecureBuffer? {
        try plaintext.withUnsafeBytes { bytes in
            Result { () throws(FormatError) -> SecureBuffer? in
                guard try schemaAndHeader(of: bytes).schema != FieldType.compactSchema else { return nil }
                let upgraded = try decode(bytes).encode()
                // What is re-sealed must read back: a body this encoding cannot hold, or would make too large, stays as it was.
                guard upgraded.count <= FormatConstants.maximumBodyPlaintext else { return nil }
                _ = try upgraded.withUnsafeBytes { upgraded in Result { () throws(FormatError) in try DecodedBody(borrowing: upgraded) } }.get()
                return upgraded
            }
        }.get()
    }

    /// The schema, revision and update time of a decrypted body, without decoding its fields.
    package static func header(of plaintext: SecureBuffer) throws(FormatError) -> (revision: UInt64, updatedAt: Int64) {
        try plaintext.withUnsafeBytes { bytes in Result { () throws(FormatError) in try header(of: bytes) } }.get()
    }

    @inlinable
    package static func header(of bytes: UnsafeRawBufferPointer) throws(FormatError) -> (revision: UInt64, updatedAt: Int64) {
        let header = try schemaAndHeader(of: bytes)
        return (header.revision, header.updatedAt)
    }

    @inlinable
    package static func schemaAndHeader(of bytes: UnsafeRawBufferPointer) throws(FormatError) -> (schema: UInt8, revision: UInt64, updatedAt: Int64) {
        var reader = ByteReader(bytes)
        let schema = try reader.readByte("body schema")
        guard schema == FieldType.compactSchema || schema == FieldType.namedSchema else { throw FormatError("unsupported body schema \(schema)") }
        return (schema, try reader.read(UInt64.self, "revision"), try reader.read(Int64.self, "updated_at"))
    }
}

/// A decrypted body read in place: its header and a field table over the plaintext, valid only while the
/// plaintext is (``RecordStore/withBody(_:key:database:_:)`` lends one).
package struct DecodedBody {
    package var schema: UInt8
    package var revision: UInt64
    package var updatedAt: Int64
    package var fields: FieldTable

    @inlinable
    package init(borrowing plaintext: UnsafeRawBufferPointer) throws(FormatError) {
        (schema, revision, updatedAt) = try RecordBody.schemaAndHeader(of: plaintext)
        fields = try FieldTable(borrowing: plaintext, offset: RecordBody.headerCount, schema: schema)
    }
}

/// An access token's summary plaintext (FORMAT.md §5.4).
package enum RecordSummary {
    /// A summary of schema 1 (a bare field map, whose first byte is 0) re-encoded in schema 2; nil for one already in
    /// schema 2. What a record's re-sealing writes, beside ``RecordBody/upgraded(_:)``.
    package static func upgraded(_ plaintext: SecureBuffer) throws(FormatError) -> SecureBuffer? {
        try plaintext.withUnsafeBytes { bytes in
            Result { () throws(FormatError) -> SecureBuffer? in
                guard bytes.first == 0 else { return nil }
                var reader = ByteReader(bytes)
                let upgraded = try FieldMap.decode(&reader, schema: FieldType.namedSchema).encodedSummary()
                return upgraded.count <= FormatConstants.maximumSummaryPlaintext ? upgraded : nil
            }
        }.get()
    }
}

extension FieldMap {
    /// Encodes an access token's summary plaintext (FORMAT.md §5.4) into a zeroizing buffer: `u8 0x02 ‖` the compact
    /// field map of schema 2. (A summary of schema 1 is a bare field map whose first byte, of its `u32be` count, is 0.)
    /// Bytes ``encodedSummary()`` takes.
    package var summaryEncodedCount: Int { 1 + compactEncodedCount() }

    package func encodedSummary() -> SecureBuffer {
        let buffer = SecureBuffer(count: summaryEncodedCount)
        buffer.withUnsafeMutableBytes { bytes in
            var writer = ByteWriter(bytes)
            writer.write(FieldType.compactSchema)
            encodeCompact(into: &writer)
            precondition(writer.remaining == 0, "a summary's size was miscounted")
        }
        return buffer
    }
}
