import Foundation
import Testing
@testable import cachetool

/// `cachetool info` as a person reads it: sizes in binary units with the share of the map in use, record counts as a
/// table with a total; `--json` keeps raw numbers for scripts.
@Suite struct InfoOutputTests {
    @Test func humanInfoReadsAsSizesAndATable() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let run = try store.run(["info"])
            #expect(run.status == 0, "\(run.output)")
            let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let size = try #require(lines.first { $0.hasPrefix("size ") })
            #expect(size.contains(" KiB used of a 32.0 MiB map (") && size.contains("%)") && size.contains("grows up to"), "\(size)")
            #expect(lines.contains { $0.hasPrefix("key ") && $0.contains("key file or raw key; 1 data key") })
            #expect(lines.contains { $0.hasPrefix("libraries ") && $0.contains("liblmdb 0.9.") && $0.contains("libsodium 1.0.") })
            // No raw byte counts and no embedded JSON.
            #expect(!run.stdout.contains("map_size") && !run.stdout.contains("{"))
            // The record table: one row per kind and a total that adds up.
            let json = try #require(try JSONSerialization.jsonObject(with: Data(try store.run(["info", "--json"]).stdout.utf8)) as? [String: Any])
            let counts = try #require(json["records"] as? [String: Int])
            #expect(lines.contains { $0.hasPrefix("records ") && $0.hasSuffix("count") })
            for (kind, count) in counts {
                #expect(lines.contains { $0.split(separator: " ", omittingEmptySubsequences: true) == [Substring(kind), Substring("\(count)")] }, "\(kind)")
            }
            let total = counts.values.reduce(0, +)
            #expect(total == 17 && lines.contains { $0.split(separator: " ", omittingEmptySubsequences: true) == ["total", Substring("\(total)")] })
        }
    }

    @Test func byteCountsUseBinaryUnits() {
        #expect(Info.bytes(0) == "0 bytes")
        #expect(Info.bytes(1023) == "1023 bytes")
        #expect(Info.bytes(1024) == "1.0 KiB")
        #expect(Info.bytes(33_554_432) == "32.0 MiB")
        #expect(Info.bytes(1_610_612_736) == "1.5 GiB")
    }
}
