import Foundation
import Testing
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

/// `cachetool bench`: the one-command benchmark. Its JSON names are a stable interface (README, "Benchmark it
/// yourself"); its figures must be real percentiles of real samples.
@Suite struct BenchTests {
    static let figures = [
        "lookup_hit", "lookup_miss", "lookup_refresh", "lookup_hit_companions", "client_token_hit", "client_token_l1_hit",
        "client_refresh", "ingest_durable", "cold_open_first_lookup", "process_start", "floor_get_decrypt",
        "floor_get_decrypt_aes_256_gcm", "floor_get_decrypt_xchacha20_poly1305",
    ]
    static let documentedKeys = Set(["tokens", "cpu", "cipher", "population", "store_bytes", "msal_json_bytes", "readers"] + figures)
    static let readerKeys: Set = [
        "lookups_per_reader", "rounds", "one_thread_per_s", "two_threads_per_s", "two_threads_scaling", "one_process_per_s",
        "two_processes_per_s", "two_processes_scaling",
    ]

    /// Whether this test run is a sanitizer build (`make sanitize` passes its options on).
    static let sanitizerBuild = !CacheTool.sanitizerOptions.isEmpty

    @Test func jsonHasExactlyTheDocumentedKeys() throws {
        try CLIStore.with { store in
            let place = store.root + "/bench"
            let run = try CacheTool.run(["bench", "--tokens", "2000", "--lookups", "500", "--json", "--dir", place])
            #expect(run.exitedNormally && run.status == 0, "\(run.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(Set(object.keys) == Self.documentedKeys)
            #expect(object["tokens"] as? Int == 2000)
            #expect((object["cpu"] as? String)?.isEmpty == false)
            #expect(object["cipher"] as? String == StoreCipher.preferred.rawValue)
            #expect((object["store_bytes"] as? Int ?? 0) > 0)
            #expect((object["msal_json_bytes"] as? Int ?? 0) > 0)
            let population = try #require(object["population"] as? [String: Any])
            #expect(population["access_tokens"] as? Int == 2000 && population["profile"] as? String == "default")
            for name in Self.figures {
                let figure = try #require(object[name] as? [String: Any], "\(name)")
                let probed: Set<String> = name.hasPrefix("lookup_") ? ["allocations_per_call", "instructions_per_call"] : []
                #expect(Set(figure.keys) == Set(["p50_ns", "p90_ns", "p99_ns", "samples"]).union(probed), "\(name)")
                if name.hasPrefix("lookup_") {
                    // Every lookup allocates (its result, a hit its secret), a few dozen times in release (hundreds in a
                    // debug build), never thousands; instructions are a count or null (a machine without counters).
                    // null only in a sanitizer build (`make sanitize`), whose runtime owns malloc.
                    if !(figure["allocations_per_call"] is NSNull) || !Self.sanitizerBuild {
                        let allocations = figure["allocations_per_call"] as? Double ?? -1
                        #expect(allocations >= 1 && allocations < 1_000, "\(name): \(allocations)")
                    }
                    #expect(figure["instructions_per_call"] is NSNull || (figure["instructions_per_call"] as? Int ?? 0) > 1_000, "\(name)")
                }
                let values = ["p50_ns", "p90_ns", "p99_ns", "samples"].map { figure[$0] as? Int ?? 0 }
                #expect(values.allSatisfy { $0 > 0 }, "\(name): \(values)")
                #expect(values[0] <= values[1] && values[1] <= values[2], "\(name): \(values)")
            }
            #expect((object["lookup_hit"] as? [String: Any])?["samples"] as? Int == 500)
            // Both ciphers' floors in one run, whatever the store's cipher.
            for cipher in ["aes_256_gcm", "xchacha20_poly1305"] {
                #expect((object["floor_get_decrypt_" + cipher] as? [String: Int])?["samples"] == 500, "\(cipher)")
            }
            let readers = try #require(object["readers"] as? [String: Any])
            #expect(Set(readers.keys) == Self.readerKeys)
            #expect(readers["lookups_per_reader"] as? Int == 1_000 && readers["rounds"] as? Int == 3)
            for key in ["one_thread_per_s", "two_threads_per_s", "one_process_per_s", "two_processes_per_s"] {
                #expect((readers[key] as? Int ?? 0) > 1_000, "\(key)")
            }
            // Two readers on two cores: more than one and, whatever the machine, less than three times one.
            for key in ["two_threads_scaling", "two_processes_scaling"] {
                let scaling = readers[key] as? Double ?? 0
                #expect(scaling > 0.3 && scaling < 3, "\(key): \(scaling)")
            }
            #expect((object["ingest_durable"] as? [String: Any])?["samples"] as? Int == 50)
            // Without --keep nothing is left behind.
            #expect(!FileManager.default.fileExists(atPath: place))
        }
    }

    @Test func keptStoreVerifiesAndTheTableNamesEveryFigure() throws {
        try CLIStore.with { store in
            let place = store.root + "/bench"
            let run = try CacheTool.run(["bench", "--tokens", "300", "--lookups", "40", "--population", "many-scopes", "--dir", place, "--keep"])
            #expect(run.exitedNormally && run.status == 0, "\(run.stderr)")
            for name in Self.figures + ["store_bytes", "msal_json_bytes", "CPU: ", "many-scopes", "allocs", "readers (hit lookups/s", "two threads", "two processes"] {
                #expect(run.stdout.contains(name), "\(name)")
            }
            let verify = try CacheTool.run(["verify", "--store", place + "/store", "--key-file", place + "/key", "--json"])
            #expect(verify.status == 0, "\(verify.output)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
            let verified = try #require(report["verified"] as? [String: Int])
            #expect(verified["AccessToken"] == 300)
            #expect((report["problems"] as? [Any])?.isEmpty == true)
            // msal_json_bytes (counted one account at a time) is the size of the whole export of the kept store.
            let json = try CacheTool.run(["bench", "--tokens", "1", "--lookups", "1", "--json", "--dir", store.root + "/tiny", "--keep"])
            let tinyBytes = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])["msal_json_bytes"] as? Int
            let exported = try CacheTool.run(["export", "--include-secrets", "--store", store.root + "/tiny/store", "--key-file", store.root + "/tiny/key", "-o", store.root + "/tiny.json"])
            #expect(exported.status == 0, "\(exported.output)")
            let size = try FileManager.default.attributesOfItem(atPath: store.root + "/tiny.json")[.size] as? Int
            #expect(tinyBytes != nil && tinyBytes == size)
            // A second run refuses the occupied place rather than measuring a store it did not build.
            let again = try CacheTool.run(["bench", "--tokens", "10", "--lookups", "10", "--dir", place])
            #expect(again.status == 1 && again.stdout.isEmpty)
        }
    }

    @Test func percentilesAreNearestRank() {
        #expect(LatencySummary.percentile(sorted: [7], 50) == 7)
        #expect(LatencySummary.percentile(sorted: [7], 99) == 7)
        let hundred = (1...100).map(UInt64.init)
        #expect(LatencySummary.percentile(sorted: hundred, 50) == 50)
        #expect(LatencySummary.percentile(sorted: hundred, 90) == 90)
        #expect(LatencySummary.percentile(sorted: hundred, 99) == 99)
        #expect(LatencySummary.percentile(sorted: hundred, 100) == 100)
        #expect(LatencySummary.percentile(sorted: [1, 2, 3], 50) == 2)
        #expect(LatencySummary.percentile(sorted: [10, 20, 30, 40], 50) == 20)
        #expect(LatencySummary.percentile(sorted: [10, 20, 30, 40], 90) == 40)
        let summary = LatencySummary(nanoseconds: [5, 1, 4, 2, 3, 9, 8, 7, 6, 10])
        #expect(summary.p50 == 5 && summary.p90 == 9 && summary.p99 == 10 && summary.samples == 10)
    }
}
