import Foundation
import TestSupport
import Testing
import TokenCacheSodium

@testable import TokenCache
import TokenCacheRecords
import TokenCacheStorage

/// One vector file of FORMAT.md §11: `name: value` lines, an empty line, then expected bytes in hex.
struct FormatVector {
    let name: String
    private let values: [String: String]
    let fields: [(type: String, name: String, value: String)]
    let expected: [UInt8]

    static let directory = Bundle.module.resourceURL!.appendingPathComponent("FormatVectors")

    static var allNames: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".txt") }.sorted()
    }

    init(_ name: String) throws {
        self.name = name
        let text = try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
        let parts = text.components(separatedBy: "\n\n")
        var values: [String: String] = [:]
        var fields: [(String, String, String)] = []
        for line in parts[0].split(separator: "\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = String(line[..<colon])
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            if key.hasPrefix("field.") {
                let components = key.split(separator: ".", maxSplits: 2).map(String.init)
                let fieldName = components[2].replacingOccurrences(of: "_text", with: "", options: [.anchored, .backwards])
                    .replacingOccurrences(of: "_int", with: "", options: [.anchored, .backwards])
                fields.append((components[1], fieldName, value))
            } else {
                values[key] = value
            }
        }
        self.values = values
        self.fields = fields
        expected = parts.count > 1 ? try Self.hex(parts[1...].joined().filter { !$0.isWhitespace }) : []
    }

    static func hex(_ text: String) throws -> [UInt8] {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { throw FormatError("odd hex length") }
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw FormatError("bad hex")
            }
            return byte
        }
    }

    func text(_ key: String) throws -> String { try #require(values[key + "_text"], "\(name): \(key)_text") }
    func int(_ key: String) throws -> Int64 {
        let text = try #require(values[key + "_int"], "\(name): \(key)_int")
        return try #require(Int64(text))
    }
    func bytes(_ key: String) throws -> [UInt8] { try Self.hex(try #require(values[key], "\(name): \(key)")) }
    func has(_ key: String) -> Bool { values[key] != nil }
    var expect: String { values["expect_text"] ?? "" }

    func key(_ name: String) throws -> SecureKey { try bytes(name).withUnsafeBytes { try SecureKey(copying: $0) } }

    /// The field map the `field.*` lines describe.
    func fieldMap() throws -> FieldMap {
        var map = FieldMap()
        for field in fields {
            switch field.type {
            case "text": map[field.name] = .string(field.value)
            case "int": map[field.name] = .integer(try #require(Int64(field.value)))
            case "json": map[field.name] = .json(Array(field.value.utf8))
            default: Issue.record("\(name): unknown field type \(field.type)")
            }
        }
        return map
    }

    /// The cipher the vector's (first) data key names: `cipher_int`, XChaCha20-Poly1305's when absent.
    func cipher(_ key: String = "cipher") throws -> RecordCipher {
        guard has(key + "_int") else { return .xchacha20Poly1305 }
        return try #require(RecordCipher(rawValue: UInt8(try int(key))))
    }

    /// A keyring whose only data key (id 1), its cipher and the store id are the vector's.
    func keyring() throws -> Keyring {
        let root = try SecureKey(randomCount: 32)
        return try Keyring.create(
            rootKind: .rawKey, root: root, salt: [UInt8](repeating: 0, count: 16), cost: nil, cipher: try cipher(), now: 0,
            fixed: (storeID: try bytes("store_id"), dataKey: try key("data_key"), nonce: [UInt8](repeating: 0, count: 24))
        )
    }
}

func encoded(_ map: FieldMap) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: map.encodedCount)
    bytes.withUnsafeMutableBytes { buffer in
        var writer = ByteWriter(buffer)
        map.encode(into: &writer)
    }
    return bytes
}

/// A field map in body schema 2's encoding (FORMAT.md §5.3).
func compactEncoded(_ map: FieldMap) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: map.compactEncodedCount())
    bytes.withUnsafeMutableBytes { buffer in
        var writer = ByteWriter(buffer)
        map.encodeCompact(into: &writer)
    }
    return bytes
}

extension SecureKey {
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

extension SecureBuffer {
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

@Suite struct FormatVectorTests {
    @Test func formatMDNamesEveryVectorAndEveryNamedVectorExists() throws {
        let text = try Repository.text("FORMAT.md")
        let section = try #require(text.components(separatedBy: "## 11. Test vectors").last?.components(separatedBy: "## 12.").first)
        let named = Set(section.matches(of: /`([a-z0-9-]+\.txt)`/).map { String($0.output.1) })
        #expect(named.count >= 12)
        #expect(named == Set(FormatVector.allNames))
    }

    /// The storage seam's key spaces are FORMAT.md §3's databases, by name and in its order (the order is also the
    /// index a salvage progress file records).
    @Test func keySpacesAreTheNamedDatabasesOfSectionThree() throws {
        let text = try Repository.text("FORMAT.md")
        let section = try #require(text.components(separatedBy: "## 3. Named databases").last?.components(separatedBy: "## 4.").first)
        let names = section.matches(of: /(?m)^\| `([a-z_]+)` \|/).map { String($0.output.1) }
        #expect(names == KeySpace.allCases.map(\.name))
        #expect(KeySpace.allCases.map(\.rawValue) == Array(0..<6))
    }

    @Test func blindIndexKeysAndFingerprints() throws {
        let vector = try FormatVector("blind-index.txt")
        let keyring = try Keyring.create(
            rootKind: .rawKey, root: try SecureKey(randomCount: 32), salt: [UInt8](repeating: 0, count: 16), cost: nil,
            cipher: .xchacha20Poly1305, now: 0,
            fixed: (storeID: [UInt8](repeating: 0, count: 16), dataKey: try vector.key("data_key"), nonce: [UInt8](repeating: 0, count: 24))
        )
        let index = keyring.index
        #expect(index.key.bytes == (try vector.bytes("index_key")))
        let home = try vector.text("home_account_id"), environment = try vector.text("environment")
        let realm = try vector.text("realm"), client = try vector.text("client_id"), target = try vector.text("target")
        let keyID = try vector.text("key_id")
        #expect(Account.storageKey(for: .init(homeAccountID: home, environment: environment, realm: realm), index: index) == (try vector.bytes("account_key")))
        let atKey = AccessToken.storageKey(
            for: .init(homeAccountID: home, environment: environment, clientID: client, realm: realm, target: target,
                       tokenType: try vector.text("token_type"), keyID: keyID.isEmpty ? nil : keyID),
            index: index
        )
        #expect(atKey == (try vector.bytes("access_token_key")))
        let extended = try ExtendedCacheKey(try vector.text("ext_cache_key"))
        let atExtKey = AccessToken.storageKey(
            for: .init(homeAccountID: home, environment: environment, clientID: client, realm: realm, target: target,
                       tokenType: try vector.text("token_type"), keyID: keyID.isEmpty ? nil : keyID, extendedCacheKey: extended.value),
            index: index
        )
        #expect(atExtKey == (try vector.bytes("access_token_ext_key")))
        let partition = try vector.text("user_assertion_hash")
        let atOBOKey = AccessToken.storageKey(
            for: .init(homeAccountID: home, environment: environment, clientID: client, realm: realm, target: target,
                       tokenType: try vector.text("token_type"), keyID: keyID.isEmpty ? nil : keyID, userAssertionHash: partition),
            index: index
        )
        #expect(atOBOKey == (try vector.bytes("access_token_obo_key")))
        let rtOBOKey = RefreshToken.storageKey(
            for: .init(homeAccountID: home, environment: environment, owner: .client(client), userAssertionHash: partition), index: index
        )
        #expect(rtOBOKey == (try vector.bytes("refresh_token_obo_key")))
        #expect(RefreshToken.storageKey(for: .init(homeAccountID: home, environment: environment, owner: .client(client)), index: index) == (try vector.bytes("refresh_token_client_key")))
        #expect(RefreshToken.storageKey(for: .init(homeAccountID: home, environment: environment, owner: .family(try vector.text("family_id"))), index: index) == (try vector.bytes("refresh_token_family_key")))
        #expect(IDToken.storageKey(for: .init(homeAccountID: home, environment: environment, clientID: client, realm: realm), index: index) == (try vector.bytes("id_token_key")))
        #expect(AppMetadata.storageKey(for: .init(clientID: client, environment: environment), index: index) == (try vector.bytes("app_metadata_key")))
        #expect(keyring.fingerprint(database: KeySpace.accessTokens.name, key: atKey) == (try vector.text("fingerprint")))
    }

    @Test func fieldMapEncodingIsCanonical() throws {
        let vector = try FormatVector("field-map.txt")
        let map = try vector.fieldMap()
        #expect(encoded(map) == vector.expected)
        let decoded = try vector.expected.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try FieldMap.decode(&reader)
        }
        #expect(decoded == map)
    }

    /// Schema 2 (§5.3): ids, an unknown name written out, segmented text decoded and as it is; written byte for byte
    /// as the independent generator wrote it, and read back to the same map.
    @Test func compactFieldMapEncodingIsCanonical() throws {
        let vector = try FormatVector("field-map-compact.txt")
        let map = try vector.fieldMap()
        #expect(compactEncoded(map) == vector.expected)
        let decoded = try vector.expected.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try FieldMap.decode(&reader, schema: FieldType.compactSchema)
        }
        #expect(decoded == map)
        let spelled = try FormatVector("field-map-compact-spelled-id.txt")
        #expect(spelled.expect == "invalid field map")
        #expect(throws: FormatError("field 0 spells out a name that has an id")) {
            try spelled.expected.withUnsafeBytes { raw in
                var reader = ByteReader(raw)
                return try FieldMap.decode(&reader, schema: FieldType.compactSchema)
            }
        }
    }

    @Test func unorderedFieldMapsAreRejected() throws {
        let vector = try FormatVector("field-map-unordered.txt")
        #expect(vector.expect == "invalid field map")
        #expect(throws: FormatError.self) {
            try vector.expected.withUnsafeBytes { raw in
                var reader = ByteReader(raw)
                return try FieldMap.decode(&reader)
            }
        }
    }

    /// A header after a rotation's first step (§6.5): read as written, key 2 active (its record key seals), key 1 still
    /// the index root; retiring key 2 again leaves a header that only key 1's wrap is in.
    @Test func aHeaderWithTwoDataKeysUnlocksWithTheSecondActiveAndTheFirstRootingTheIndex() throws {
        let vector = try FormatVector("header-two-keys.txt")
        let root = try vector.key("root_key")
        let header = try StoreHeader.decode(vector.expected)
        #expect(header.encoded() == vector.expected)
        let dates = [try vector.int("created_at"), try vector.int("created_at_2")]
        #expect(header.wrappedKeys.map(\.keyID) == [1, 2] && header.wrappedKeys.map(\.createdAt) == dates)
        #expect(header.wrappedKeys.map(\.cipher) == [try vector.cipher(), try vector.cipher("cipher_2")])
        let keyring = try Keyring.unlock(header: header, root: root)
        #expect(keyring.activeKeyID == 2 && keyring.keyIDs == [1, 2])
        #expect(keyring.activeRecordKey.key.bytes == (try vector.bytes("record_key_2")))
        #expect(keyring.activeCipher == .aes256GCM && keyring.recordKey(1)?.cipher == .xchacha20Poly1305)
        #expect(keyring.index.key.bytes == (try vector.bytes("index_key")))
        let retired = try keyring.retiring([1, 2], root: root)
        #expect(retired.keyIDs == [1, 2], "neither the first nor the active key is ever retired")
        let added = try keyring.addingDataKey(createdAt: 1_795_500_000, cipher: .xchacha20Poly1305, root: root)
        #expect(added.keyIDs == [1, 2, 3] && added.index.key.bytes == keyring.index.key.bytes)
        let reopened = try Keyring.unlock(header: try StoreHeader.decode(added.header.encoded()), root: root)
        #expect(reopened.recordKey(2)?.key.bytes == (try vector.bytes("record_key_2")) && reopened.activeCipher == .xchacha20Poly1305)
        let withoutSecond = try added.retiring([2], root: root)
        #expect(withoutSecond.keyIDs == [1, 3] && withoutSecond.recordKey(2) == nil && withoutSecond.index.key.bytes == keyring.index.key.bytes)
        #expect(try Keyring.unlock(header: withoutSecond.header, root: root).keyIDs == [1, 3])
    }

    /// A header of format version 2 (no cipher byte) still reads, every key XChaCha20-Poly1305's, and writes back byte
    /// for byte; renamed to another cipher in a version-3 header, a key no longer opens.
    @Test func aVersion2HeaderStillReadsAndACipherRenamedBreaksTheWrap() throws {
        let vector = try FormatVector("header-raw-key-v2.txt")
        let root = try vector.key("root_key")
        let header = try StoreHeader.decode(vector.expected)
        #expect(header.readVersion == 2 && header.writeVersion == 2 && header.encoded() == vector.expected)
        #expect(header.wrappedKeys.map(\.cipher) == [.xchacha20Poly1305])
        let keyring = try Keyring.unlock(header: header, root: root)
        #expect(keyring.recordKey(1)?.key.bytes == (try FormatVector("record-access-token.txt").bytes("record_key")))

        var renamed = try StoreHeader.decode(try FormatVector("header-raw-key.txt").expected)
        #expect(renamed.wrappedKeys[0].cipher == .aes256GCM)
        renamed.wrappedKeys[0].cipher = .xchacha20Poly1305
        let error = #expect(throws: KeyringError.self) { try Keyring.unlock(header: renamed, root: root) }
        #expect(error?.code == .wrongKey)
        // An unknown cipher byte is a malformed header, checksum and all.
        var bytes = try FormatVector("header-raw-key.txt").expected
        bytes[62 + 12] = 0x07
        let body = Array(bytes[..<(bytes.count - 16)])
        bytes = body + StoreHeader.checksum(body)
        #expect(throws: StoreHeader.DecodeError.self) { try StoreHeader.decode(bytes) }
    }

    /// A header of format version 3 (the layout of version 4, versions 3 in its wraps' associated data) still reads and
    /// writes back byte for byte; what an upgrade to version 4 starts from.
    @Test func aVersion3HeaderStillReads() throws {
        let vector = try FormatVector("header-raw-key-v3.txt")
        let header = try StoreHeader.decode(vector.expected)
        #expect(header.readVersion == 3 && header.writeVersion == 3 && header.encoded() == vector.expected)
        #expect(header.wrappedKeys.map(\.cipher) == [.aes256GCM])
        let keyring = try Keyring.unlock(header: header, root: try vector.key("root_key"))
        #expect(keyring.recordKey(1)?.key.bytes == (try FormatVector("record-access-token.txt").bytes("record_key")))
        #expect(vector.expected != (try FormatVector("header-raw-key.txt").expected))
    }

    @Test(arguments: ["header-raw-key.txt", "header-passphrase.txt"])
    func headersMatchByteForByteAndUnlock(file: String) throws {
        let vector = try FormatVector(file)
        let root: SecureKey
        var cost: PassphraseCost? = nil
        var salt = [UInt8](repeating: 0, count: 16)
        if vector.has("salt") {
            salt = try vector.bytes("salt")
            cost = PassphraseCost(opsLimit: UInt64(try vector.int("opslimit")), memLimit: UInt64(try vector.int("memlimit")))
            root = try Array(try vector.text("passphrase").utf8).withUnsafeBytes { passphrase in
                try PasswordHash.deriveKey(count: 32, passphrase: passphrase, salt: salt, opsLimit: cost!.opsLimit, memLimit: cost!.memLimit)
            }
            #expect(root.bytes == (try vector.bytes("root_key")))
        } else {
            root = try vector.key("root_key")
        }
        #expect(try Keyring.keyEncryptionKey(root: root).bytes == (try vector.bytes("kek")))
        let created = try Keyring.create(
            rootKind: cost == nil ? .rawKey : .passphrase, root: root, salt: salt, cost: cost.map { ($0.opsLimit, $0.memLimit) },
            cipher: try vector.cipher(), now: try vector.int("created_at"),
            fixed: (storeID: try vector.bytes("store_id"), dataKey: try vector.key("data_key"), nonce: try vector.bytes("nonce"))
        )
        #expect(created.header.encoded() == vector.expected)
        let decoded = try StoreHeader.decode(vector.expected)
        #expect(decoded == created.header)
        let unlocked = try Keyring.unlock(header: decoded, root: root)
        #expect(unlocked.index.key.bytes == created.index.key.bytes)
        // Dropping the key list's only entry, or re-dating it, breaks every wrap (the key list is authenticated).
        var redated = decoded
        redated.wrappedKeys[0].createdAt += 1
        let error = #expect(throws: KeyringError.self) { try Keyring.unlock(header: redated, root: root) }
        #expect(error?.code == .wrongKey)
    }

    @Test(arguments: [
        "record-access-token.txt", "record-access-token-lone.txt", "record-access-token-aes.txt", "record-access-token-v3.txt", "record-account.txt",
        "record-foreign-sections.txt",
        "record-access-token-cap.txt", "record-refresh-lease.txt", "record-refresh-lease-refused.txt",
    ])
    func recordsMatchByteForByteAndDecode(file: String) throws {
        let vector = try FormatVector(file)
        let keyring = try vector.keyring()
        #expect(try #require(keyring.recordKey(1)).key.bytes == (try vector.bytes("record_key")))
        #expect(keyring.recordKey(1)?.cipher == (try vector.cipher()))
        // AES-256-GCM: each section's one-message key, from the record key and the section's seed (§1).
        for section in ["summary", "body"] where vector.has("\(section)_seal_key") {
            var sealKey = [UInt8](repeating: 0, count: 32)
            try (try vector.bytes("\(section)_nonce")).withUnsafeBytes { seed in
                try sealKey.withUnsafeMutableBytes { try AES256GCM.sealKey(from: keyring.recordKey(1)!.key, seed: seed, into: $0) }
            }
            #expect(sealKey == (try vector.bytes("\(section)_seal_key")))
        }
        let database = try vector.text("database")
        let lmdbKey = try vector.bytes("lmdb_key")
        let slot = RecordSlot(storeID: try vector.bytes("store_id"), database: database, key: lmdbKey)
        let body = try vector.bytes("body_plaintext")
        let summary = vector.has("summary_plaintext") ? try vector.bytes("summary_plaintext") : nil
        var sealed = [UInt8](repeating: 0, count: RecordEnvelope.sealedCount(summaryPlaintext: summary?.count, bodyPlaintext: body.count))
        let nonces = FixedNonces(summary: vector.has("summary_nonce") ? try vector.bytes("summary_nonce") : nil, body: try vector.bytes("body_nonce"))
        try sealed.withUnsafeMutableBytes { output in
            try body.withUnsafeBytes { body in
                if let summary {
                    try summary.withUnsafeBytes { summary in
                        try RecordEnvelope.seal(summary: summary, body: body, slot: slot, keyID: 1, key: keyring.recordKey(1)!, into: output, nonces: nonces)
                    }
                } else {
                    try RecordEnvelope.seal(summary: nil, body: body, slot: slot, keyID: 1, key: keyring.recordKey(1)!, into: output, nonces: nonces)
                }
            }
        }
        #expect(sealed == vector.expected)

        // Reading back: plaintexts, record metadata, the entity, its canonical re-encoding and its storage key.
        let openedBody = try vector.expected.withUnsafeBytes { try RecordEnvelope.open(.body, of: $0, slot: slot, keys: keyring.recordKey) }
        #expect(try #require(openedBody).bytes == body)
        let plaintext = try #require(openedBody)
        try plaintext.withUnsafeBytes { bytes in
            let record = try DecodedBody(borrowing: bytes)  // the plaintext is lent, as readers lend it
            #expect(record.revision == UInt64(try vector.int("revision")))
            #expect(record.updatedAt == (try vector.int("updated_at")))
            // Schema 2 (what this version writes) leaves credential_type out; schema 1 (version 3's, still read) kept it.
            let schema = vector.has("body_schema_int") ? UInt8(try vector.int("body_schema")) : FieldType.compactSchema
            #expect(record.schema == schema)
            var listed = try vector.fieldMap()
            if schema == FieldType.compactSchema { listed["credential_type"] = nil }
            #expect(record.fields.fieldMap == listed)
            /// The body this version writes for `fields`: byte for byte the vector's, for a body of schema 2.
            func rewritten(_ fields: FieldMap) -> [UInt8] {
                RecordBody(revision: record.revision, updatedAt: record.updatedAt, fields: fields).encode().bytes
            }
            let openedSummary = try vector.expected.withUnsafeBytes { try RecordEnvelope.open(.summary, of: $0, slot: slot, keys: keyring.recordKey) }
            #expect(openedSummary?.bytes == summary)
            switch database {
            case KeySpace.accessTokens.name:
                let token = try AccessToken(decoding: record.fields)
                if schema == FieldType.compactSchema {
                    #expect(rewritten(token.encodeFields()) == body)
                    #expect(token.summaryFields()?.encodedSummary().bytes == summary)
                } else {
                    #expect(encoded(token.encodeFields()) == encoded(record.fields.fieldMap))
                    #expect(token.summaryFields().map(encoded) == summary)
                    // Re-sealed, it is written in schema 2: the same fields but credential_type, and smaller.
                    let upgraded = try #require(try RecordBody.upgraded(plaintext))
                    #expect(upgraded.bytes == rewritten(token.encodeFields()) && upgraded.count < body.count - 100)
                    #expect(try RecordBody.upgraded(upgraded) == nil)
                }
                let storageKey = AccessToken.storageKey(for: token.key, index: keyring.index)
                if lmdbKey.count == RecordStore.bucketPrefixCount {
                    #expect(Array(storageKey.prefix(RecordStore.bucketPrefixCount)) == lmdbKey)  // a lone token (§4.3)
                } else {
                    #expect(storageKey == lmdbKey)
                }
            case KeySpace.accounts.name:
                let account = try Account(decoding: record.fields)
                #expect(rewritten(account.encodeFields()) == body)
                #expect(!account.additionalFields.isEmpty)
                #expect(Account.storageKey(for: account.key, index: keyring.index) == lmdbKey)
            case KeySpace.meta.name where lmdbKey == RecordStore.accessTokenCapKey:
                // The access-token cap (§5.6): read as the store reads it, and written back byte for byte.
                let cap = try RecordStore.accessTokenCap(in: record.fields)
                #expect(cap == 10_000)
                #expect(RecordStore.accessTokenCapBody(cap, now: record.updatedAt).encode().bytes == body)
            case KeySpace.meta.name where RecordStore.isRefreshLeaseKey(lmdbKey):
                // A refresh lease (§5.7): its key names the refresh token's storage key; its body reads as the store
                // reads it and is written back byte for byte.
                #expect(!(try vector.text("client_id")).isEmpty)  // a family token: the family owns it, not the client
                let refreshToken = RefreshToken.Key(
                    homeAccountID: try vector.text("home_account_id"), environment: try vector.text("environment"),
                    owner: .family(try vector.text("family_id"))
                )
                let refreshTokenKey = RefreshToken.storageKey(for: refreshToken, index: keyring.index)
                #expect(refreshTokenKey == (try vector.bytes("refresh_token_key")))
                #expect(RecordStore.refreshLeaseKey(refreshTokenKey: refreshTokenKey) == lmdbKey)
                let lease = try RecordStore.refreshLease(in: record.fields)
                let expected = record.fields.entries.count == 4
                    // A refusal record (§5.7, step 2): the lease after the token endpoint refused revision 3.
                    ? RecordStore.StoredRefreshLease(
                        holder: "5f0c9e2a7b1d4c3e8a6f0b2d4e6c8a1f", expiresAt: 1_795_440_530_000, pid: 4242, refusedRevision: 3
                    )
                    : RecordStore.StoredRefreshLease(holder: "5f0c9e2a7b1d4c3e8a6f0b2d4e6c8a1f", expiresAt: 1_795_354_130_000, pid: 4242)
                #expect(lease == expected)
                #expect(RefreshLeaseState(of: lease, revision: 3, now: 1_795_354_130_000) == (expected.refusedRevision == nil ? .free : .refused))
                #expect(RecordStore.refreshLeaseBody(lease, now: record.updatedAt).encode().bytes == body)
            case KeySpace.meta.name:
                // The kept MSAL sections (§5.5): read as the store reads them, and written back byte for byte.
                #expect(lmdbKey == RecordStore.foreignSectionsKey)
                var sections: [String: JSONValue] = [:]
                for index in record.fields.entries.indices {
                    #expect(record.fields.entries[index].type == 0x03)
                    sections[record.fields.name(at: index)] = JSONText.decode(record.fields.value(at: index))
                }
                #expect(sections["MySDKState"] == .object(["note": .string("kept"), "n": .array([.integer(1), .double(2.5)])]))
                let rewritten = try RecordStore.foreignSectionsBody(sections, now: record.updatedAt)
                #expect(rewritten.encode().bytes == body)
            default:
                Issue.record("unexpected database \(database)")
            }
        }
    }

    @Test(arguments: [
        ("record-tampered.txt", FormatError.Kind.authenticationFailure),
        ("record-moved.txt", .authenticationFailure),
        ("record-tampered-aes.txt", .authenticationFailure),
        ("record-moved-aes.txt", .authenticationFailure),
        ("record-unknown-key.txt", .unknownKeyID),
        ("record-bad-length.txt", .lengthOutOfRange),
        ("record-bad-version.txt", .unsupportedVersion),
    ])
    func damagedRecordsFailForTheStatedReason(file: String, kind: FormatError.Kind) throws {
        let vector = try FormatVector(file)
        let expectations: [FormatError.Kind: String] = [
            .authenticationFailure: "authentication failure", .unknownKeyID: "unknown key id",
            .lengthOutOfRange: "length out of range", .unsupportedVersion: "unsupported version",
        ]
        #expect(vector.expect == expectations[kind])
        let keyring = try vector.keyring()
        let slot = RecordSlot(storeID: try vector.bytes("store_id"), database: try vector.text("database"), key: try vector.bytes("lmdb_key"))
        let error = try #require(throws: FormatError.self) {
            try vector.expected.withUnsafeBytes { try RecordEnvelope.open(.body, of: $0, slot: slot, keys: keyring.recordKey) }
        }
        #expect(error.kind == kind)
    }
}
