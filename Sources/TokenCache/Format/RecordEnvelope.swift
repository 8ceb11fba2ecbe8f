internal import TokenCacheSodium

/// The place a record is bound to: its store, named database and exact LMDB key (FORMAT.md §5.2).
/// A ciphertext moved to any other slot fails authentication.
struct RecordSlot {
    let storeID: [UInt8]
    let database: String
    let key: [UInt8]
}

/// Nonces supplied by a caller instead of drawn at random. Only test vectors use this.
struct FixedNonces {
    var summary: [UInt8]?
    var body: [UInt8]
}

/// The sealed value of a record (FORMAT.md §5.1):
///
/// ```
/// 0   u8     envelope version (0x01)
/// 1   u32be  data key id
/// 5   u32be  S = length of the summary section (0 = none)
/// 9   S      summary section: nonce[24] ‖ XChaCha20-Poly1305(summary plaintext) ‖ tag[16]
/// 9+S …      body section:    nonce[24] ‖ XChaCha20-Poly1305(body plaintext) ‖ tag[16]
/// ```
enum RecordEnvelope {
    static let headerCount = 9
    static let sectionOverhead = XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount

    enum Section {
        case summary
        case body
    }

    static func sealedCount(summaryPlaintext: Int?, bodyPlaintext: Int) -> Int {
        headerCount + (summaryPlaintext.map { $0 + sectionOverhead } ?? 0) + bodyPlaintext + sectionOverhead
    }

    /// `AD = "tcache/v1/record" ‖ store_id ‖ u32be(len db) ‖ db ‖ u32be(len key) ‖ key ‖ version ‖ u32be(key id) ‖ section [‖ summary section]`
    ///
    /// The body's associated data holds the whole sealed summary section (nonce, ciphertext, tag), so that a
    /// reader that opens only the body still detects a change to any byte of the record.
    static func associatedData(slot: RecordSlot, keyID: UInt32, section: UInt8, summarySection: UnsafeRawBufferPointer?) -> [UInt8] {
        var ad: [UInt8] = []
        ad.reserveCapacity(96 + slot.key.count)
        ad += FormatConstants.recordADLabel
        ad += slot.storeID
        appendLengthPrefixed(Array(slot.database.utf8), to: &ad)
        appendLengthPrefixed(slot.key, to: &ad)
        ad.append(FormatConstants.envelopeVersion)
        withUnsafeBytes(of: keyID.bigEndian) { ad += $0 }
        ad.append(section)
        if let summarySection { ad += summarySection }
        return ad
    }

    private static func appendLengthPrefixed(_ bytes: [UInt8], to output: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { output += $0 }
        output += bytes
    }

    /// Seals `summary` (optional) and `body` into `output`, which must hold exactly `sealedCount` bytes.
    static func seal(
        summary: UnsafeRawBufferPointer?, body: UnsafeRawBufferPointer, slot: RecordSlot, keyID: UInt32, key: SecureKey,
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
            let nonce = writer.reserve(XChaCha20Poly1305.nonceByteCount)
            fillNonce(nonce, nonces?.summary)
            let sealed = writer.reserve(summary.count + XChaCha20Poly1305.tagByteCount)
            let ad = associatedData(slot: slot, keyID: keyID, section: FormatConstants.summarySection, summarySection: nil)
            try ad.withUnsafeBytes { ad in
                try XChaCha20Poly1305.seal(summary, associatedData: ad, nonce: UnsafeRawBufferPointer(nonce), key: key, into: sealed)
            }
            summarySection = UnsafeRawBufferPointer(rebasing: output[sectionStart..<writer.position])
        }
        let nonce = writer.reserve(XChaCha20Poly1305.nonceByteCount)
        fillNonce(nonce, nonces?.body)
        let sealed = writer.reserve(body.count + XChaCha20Poly1305.tagByteCount)
        let ad = associatedData(slot: slot, keyID: keyID, section: FormatConstants.bodySection, summarySection: summarySection)
        try ad.withUnsafeBytes { ad in
            try XChaCha20Poly1305.seal(body, associatedData: ad, nonce: UnsafeRawBufferPointer(nonce), key: key, into: sealed)
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

    private struct Parsed {
        let keyID: UInt32
        let summary: UnsafeRawBufferPointer?
        let body: UnsafeRawBufferPointer
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

    /// Authenticates and decrypts one section. Returns nil when the summary is asked for and the record has none.
    static func open(
        _ section: Section, of value: UnsafeRawBufferPointer, slot: RecordSlot, keys: (UInt32) -> SecureKey?
    ) throws(FormatError) -> SecureBuffer? {
        let parsed = try parse(value)
        guard let key = keys(parsed.keyID) else {
            throw FormatError("unknown data key id \(parsed.keyID)", kind: .unknownKeyID)
        }
        let sealedSection: UnsafeRawBufferPointer
        let ad: [UInt8]
        switch section {
        case .summary:
            guard let summary = parsed.summary else { return nil }
            sealedSection = summary
            ad = associatedData(slot: slot, keyID: parsed.keyID, section: FormatConstants.summarySection, summarySection: nil)
        case .body:
            sealedSection = parsed.body
            ad = associatedData(slot: slot, keyID: parsed.keyID, section: FormatConstants.bodySection, summarySection: parsed.summary)
        }
        let nonce = UnsafeRawBufferPointer(rebasing: sealedSection[..<XChaCha20Poly1305.nonceByteCount])
        let ciphertext = UnsafeRawBufferPointer(rebasing: sealedSection[XChaCha20Poly1305.nonceByteCount...])
        let plaintext = SecureBuffer(count: ciphertext.count - XChaCha20Poly1305.tagByteCount)
        let authenticated = plaintext.withUnsafeMutableBytes { output in
            ad.withUnsafeBytes { ad in
                (try? XChaCha20Poly1305.open(ciphertext, associatedData: ad, nonce: nonce, key: key, into: output)) != nil
            }
        }
        guard authenticated else { throw FormatError("authentication failed", kind: .authenticationFailure) }
        return plaintext
    }
}

/// The body of a record: `schema u8 ‖ revision u64be ‖ updated_at i64be ‖ field map` (FORMAT.md §5.3).
struct RecordBody {
    static let headerCount = 1 + 8 + 8

    var revision: UInt64
    var updatedAt: Int64
    var fields: FieldMap

    var encodedCount: Int { Self.headerCount + fields.encodedCount }

    func encode() -> SecureBuffer {
        let buffer = SecureBuffer(count: encodedCount)
        buffer.withUnsafeMutableBytes { bytes in
            var writer = ByteWriter(bytes)
            writer.write(FormatConstants.bodySchema)
            writer.write(bigEndian: revision)
            writer.write(bigEndian: updatedAt)
            fields.encode(into: &writer)
        }
        return buffer
    }

    /// The schema, revision and update time of a decrypted body, without decoding its fields.
    static func header(of plaintext: SecureBuffer) throws(FormatError) -> (revision: UInt64, updatedAt: Int64) {
        try plaintext.withUnsafeBytes { bytes in
            Result { () throws(FormatError) in
                var reader = ByteReader(bytes)
                let schema = try reader.readByte("body schema")
                guard schema == FormatConstants.bodySchema else { throw FormatError("unsupported body schema \(schema)") }
                return (try reader.read(UInt64.self, "revision"), try reader.read(Int64.self, "updated_at"))
            }
        }.get()
    }
}

/// A decrypted body read in place: its header and a field table over the plaintext.
struct DecodedBody {
    var revision: UInt64
    var updatedAt: Int64
    var fields: FieldTable

    init(_ plaintext: SecureBuffer) throws(FormatError) {
        (revision, updatedAt) = try RecordBody.header(of: plaintext)
        fields = try FieldTable(plaintext, offset: RecordBody.headerCount)
    }
}

extension FieldMap {
    /// Encodes a bare field map (the summary plaintext) into a zeroizing buffer.
    func encodedSecureBuffer() -> SecureBuffer {
        let buffer = SecureBuffer(count: encodedCount)
        buffer.withUnsafeMutableBytes { bytes in
            var writer = ByteWriter(bytes)
            encode(into: &writer)
        }
        return buffer
    }
}
