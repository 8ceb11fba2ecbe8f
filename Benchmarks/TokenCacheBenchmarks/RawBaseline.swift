import Benchmark
import CLMDBBench
import CSodiumBench
import Foundation
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

// The reference cost of the lookup target (README, "Results"): one raw LMDB get plus one decrypt of a 1 KB record,
// written against the C libraries directly (no token-cache code), measured in the same run as the silent lookups.
//
// Store: one LMDB environment (MDB_NOTLS, 4 KiB pages, default flags otherwise) with one unnamed database; N keys of
// 32 bytes (SplitMix64 words, inserted in key-hash order, i.e. randomly, like the cache's blind-index keys);
// values = nonce[24] ‖ XChaCha20-Poly1305-IETF(1,024 random bytes, AD = 32-byte constant ‖ the key) = 1,064 bytes.
// One op: mdb_txn_renew of a reused read transaction, mdb_get of a random stored key, AD assembled in a reused
// buffer, crypto_aead_xchacha20poly1305_ietf_decrypt into a reused 1,024-byte buffer, mdb_txn_reset.

func rawBaselineBenchmarks() {
    for count in [100_000, 1_000_000] {
        let fixture = RawFixture()
        Benchmark(
            "raw LMDB get + decrypt 1 KiB, \(count) keys",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], timeUnits: .nanoseconds, warmupIterations: 1_000,
                maxDuration: .seconds(3),
                maxIterations: 1_000_000
            ),
            closure: { benchmark in
                let store = fixture.store!
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    blackHole(store.getAndDecrypt(probe: cursor & (RawFixture.probeCount - 1)))
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: { try fixture.prepare(count: count) },
            teardown: { fixture.remove() }
        )
    }
}

final class RawFixture: @unchecked Sendable {
    static let probeCount = 1 << 14
    /// The 1M-key store is kept between runs (populated once, ~1.2 GB); smaller ones are rebuilt in $TMPDIR.
    static let persistentCount = 1_000_000

    var store: RawStore?
    var directory: String?
    var persistent = false
    var cursor = 0

    func prepare(count: Int) throws {
        let directory: String
        if count == Self.persistentCount {
            directory = PersistentStores.root(default: "/tmp/tc-bench-raw-1m", variable: "TC_BENCH_RAW_1M_DIR")
            persistent = true
        } else {
            directory = FileManager.default.temporaryDirectory.path + "/tc-bench-raw-\(UUID().uuidString)"
        }
        self.directory = directory
        let marker = directory + "/complete-v1"
        var reuse = persistent && FileManager.default.fileExists(atPath: marker)
        if reuse {
            let opened = try RawStore(directory: directory, mapSize: 4 << 30)
            if opened.entries() == count {
                store = opened
            } else {
                reuse = false
            }
        }
        if !reuse {
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let store = try RawStore(directory: directory, mapSize: 4 << 30)
            let started = Date()
            store.populate(count: count)
            precondition(store.entries() == count, "raw store: wrong entry count")
            if persistent {
                try "\(count) keys, populated in \(Date().timeIntervalSince(started)) s\n".write(toFile: marker, atomically: true, encoding: .utf8)
            }
            self.store = store
        }
        let store = self.store!
        if persistent { PersistentStores.warmPageCache(directory: directory) }
        store.prepareProbes(count: count, probes: Self.probeCount)
        for probe in 0..<64 { precondition(store.getAndDecrypt(probe: probe) != 0) }  // traps on any failure
    }

    func remove() {
        store = nil
        if !persistent, let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// One LMDB environment holding sealed 1 KiB values, and the reused buffers of the measured operation.
final class RawStore {
    static let keySize = 32
    static let plaintextSize = 1_024
    static let adSize = 64
    static let nonceSize = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)  // 24
    static let tagSize = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)  // 16

    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0
    private var readTxn: OpaquePointer?
    private let aeadKey = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES))
    private let ad = UnsafeMutablePointer<UInt8>.allocate(capacity: RawStore.adSize)
    private let output = UnsafeMutablePointer<UInt8>.allocate(capacity: RawStore.plaintextSize)
    private var probeKeys = UnsafeMutablePointer<UInt8>.allocate(capacity: 0)
    private var probeCount = 0

    init(directory: String, mapSize: Int) throws {
        precondition(sodium_init() >= 0, "sodium_init failed")
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, directory, UInt32(MDB_NOTLS), 0o600), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        try check(mdb_dbi_open(txn, nil, 0, &dbi), "mdb_dbi_open")
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &readTxn), "mdb_txn_begin(rdonly)")
        mdb_txn_reset(readTxn)
        // A fixed key: this is benchmark data, and the persistent store must stay readable across runs.
        for i in 0..<Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES) { aeadKey[i] = UInt8(truncatingIfNeeded: SyntheticPopulation.mix(UInt64(i) &+ 0xAEAD)) }
        for i in 0..<32 { ad[i] = UInt8(truncatingIfNeeded: SyntheticPopulation.mix(UInt64(i) &+ 0xADAD)) }  // the constant half
    }

    deinit {
        mdb_txn_abort(readTxn)
        mdb_env_close(env)
        aeadKey.deallocate()
        ad.deallocate()
        output.deallocate()
        probeKeys.deallocate()
    }

    private func check(_ rc: Int32, _ what: String) throws {
        guard rc == 0 else { throw RawError(message: "\(what): \(String(cString: mdb_strerror(rc)))") }
    }

    static func writeKey(_ index: Int, into key: UnsafeMutablePointer<UInt8>) {
        for word in 0..<4 {
            var value = SyntheticPopulation.mix(UInt64(index) &* 4 &+ UInt64(word)).littleEndian
            withUnsafeBytes(of: &value) { bytes in
                for j in 0..<8 { key[word * 8 + j] = bytes[j] }
            }
        }
    }

    func entries() -> Int {
        var stat = MDB_stat()
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn) == 0 else { return -1 }
        defer { mdb_txn_abort(txn) }
        guard mdb_stat(txn, dbi, &stat) == 0 else { return -1 }
        return stat.ms_entries
    }

    /// Fills the store with `count` records, 50,000 per (durable) write transaction.
    func populate(count: Int) {
        let key = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.keySize)
        let plaintext = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.plaintextSize)
        let valueSize = Self.nonceSize + Self.plaintextSize + Self.tagSize
        let value = UnsafeMutablePointer<UInt8>.allocate(capacity: valueSize)
        defer { key.deallocate(); plaintext.deallocate(); value.deallocate() }
        var index = 0
        while index < count {
            var txn: OpaquePointer?
            precondition(mdb_txn_begin(env, nil, 0, &txn) == 0)
            for _ in 0..<min(50_000, count - index) {
                Self.writeKey(index, into: key)
                memcpy(ad + 32, key, 32)
                randombytes_buf(plaintext, Self.plaintextSize)
                randombytes_buf(value, Self.nonceSize)
                var sealedLength: UInt64 = 0
                precondition(
                    crypto_aead_xchacha20poly1305_ietf_encrypt(
                        value + Self.nonceSize, &sealedLength, plaintext, UInt64(Self.plaintextSize), ad, UInt64(Self.adSize),
                        nil, value, aeadKey
                    ) == 0
                )
                var k = MDB_val(mv_size: Self.keySize, mv_data: UnsafeMutableRawPointer(key))
                var v = MDB_val(mv_size: valueSize, mv_data: UnsafeMutableRawPointer(value))
                precondition(mdb_put(txn, dbi, &k, &v, 0) == 0)
                index += 1
            }
            precondition(mdb_txn_commit(txn) == 0)
        }
    }

    /// `probes` keys drawn uniformly from the stored ones, packed in one buffer.
    func prepareProbes(count: Int, probes: Int) {
        probeKeys.deallocate()
        probeKeys = .allocate(capacity: probes * Self.keySize)
        probeCount = probes
        for i in 0..<probes {
            Self.writeKey(Int(SyntheticPopulation.mix(UInt64(i) &+ 0x9B0BE) % UInt64(count)), into: probeKeys + i * Self.keySize)
        }
    }

    /// The measured operation. Returns the first plaintext byte + 1 (never 0 on success); traps on any failure.
    @inline(never)
    func getAndDecrypt(probe: Int) -> Int {
        let key = probeKeys + probe * Self.keySize
        guard mdb_txn_renew(readTxn) == 0 else { fatalError("mdb_txn_renew") }
        defer { mdb_txn_reset(readTxn) }
        var k = MDB_val(mv_size: Self.keySize, mv_data: UnsafeMutableRawPointer(key))
        var v = MDB_val()
        guard mdb_get(readTxn, dbi, &k, &v) == 0 else { fatalError("mdb_get: key not found") }
        memcpy(ad + 32, key, 32)
        let sealed = v.mv_data.assumingMemoryBound(to: UInt8.self)
        var length: UInt64 = 0
        guard
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                output, &length, nil, sealed + Self.nonceSize, UInt64(v.mv_size - Self.nonceSize), ad, UInt64(Self.adSize),
                sealed, aeadKey
            ) == 0, length == UInt64(Self.plaintextSize)
        else { fatalError("decrypt failed") }
        return Int(output[0]) + 1
    }
}

struct RawError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
