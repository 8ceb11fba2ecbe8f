import Foundation
import Testing
@testable import TokenCacheLMDB

/// A long read lets go of the map's pages it has read (`releaseResidentPages`), so a walk over a large store does not
/// keep the whole file resident; and only the store's own read-only mapping is ever released.
@Suite struct ResidentPagesTests {
    /// This process's resident file-backed memory, in bytes (`RssFile` of /proc/self/status).
    static func residentFileBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
        let kibibytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kibibytes * 1024
    }

    @Test func releasingDropsTheReadPagesAndChangesNoValue() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) { $0.initialMapSize = 256 << 20 }
        let value = [UInt8](repeating: 0xA5, count: 8_000)  // overflow pages: 2 per value
        try environment.write { txn in
            for index in 0..<6_000 {
                try value.withUnsafeBytes { try txn.put(in: db, key: Array(String(format: "k%05d", index).utf8), value: $0) }
            }
        }
        try environment.read { txn in
            var anchor: UnsafeRawPointer? = nil
            var sum = 0
            try txn.forEach(in: db, prefix: []) { _, value in
                anchor = anchor ?? value.baseAddress
                sum += Int(value[value.count / 2])
                return true
            }
            let before = try Self.residentFileBytes()
            txn.releaseResidentPages(mappedAt: try #require(anchor))
            let after = try Self.residentFileBytes()
            // About 48 MB were read; most of it leaves this process's resident set.
            #expect(before - after > 24 << 20, "RssFile \(before >> 20) MiB → \(after >> 20) MiB")
            // The same values are read again, from the page cache.
            var again = 0
            try txn.forEach(in: db, prefix: []) { _, value in
                again += Int(value[value.count / 2])
                return true
            }
            #expect(sum == 6_000 * 0xA5 && again == sum)
        }
    }

    @Test func onlyAReadOnlySharedMappingOfADataFileIsReleased() throws {
        let lines: [(String, Bool)] = [
            ("7f1c2a000000-7f1c3a000000 r--s 00000000 fe:01 1234 /tmp/store/data.mdb", true),
            ("7f1c2a000000-7f1c3a000000 rw-s 00000000 fe:01 1234 /tmp/store/data.mdb", false),
            ("7f1c2a000000-7f1c3a000000 r--p 00000000 fe:01 1234 /tmp/store/data.mdb", false),
            ("55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]", false),
            ("7f1c2a000000-7f1c3a000000 r--s 00000000 fe:01 1234 /tmp/my store/data.mdb", true),
            ("7f1c2a000000-7f1c3a000000 r--s 00000000 fe:01 1234 /tmp/store/lock.mdb", false),
        ]
        for (line, released) in lines {
            let region = try #require(MemoryMapRegion.parse(Substring(line)))
            #expect(region.isReadOnlySharedDataFile == released, "\(line)")
            #expect(region.start == 0x7f1c2a000000 || region.start == 0x55d0c0000000)
        }
        #expect(MemoryMapRegion.parse("garbage") == nil)
        // A heap address is never taken for the map.
        let heap = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer { heap.deallocate() }
        let region = MemoryMapRegion.containing(heap)
        #expect(region != nil && region?.isReadOnlySharedDataFile == false)
    }

    /// `/proc/self/maps` of a process with many mappings runs to many pages; one read returns the first only.
    @Test func aMappingFarDownTheMapsFileIsFound() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        // 600 one-page mappings whose permissions alternate, so that the kernel cannot merge neighbours: 600 lines.
        var mappings: [UnsafeMutableRawPointer] = []
        defer { for mapping in mappings { munmap(mapping, page) } }
        for index in 0..<600 {
            let protection = index.isMultiple(of: 2) ? PROT_READ : PROT_READ | PROT_WRITE
            let mapping = try #require(mmap(nil, page, protection, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
            #expect(mapping != MAP_FAILED)
            mappings.append(mapping)
        }
        let text = try #require(FileSystem.readWholeFile("/proc/self/maps"))
        #expect(text.split(separator: "\n").count > 600)
        for mapping in [mappings[0], mappings[299], mappings[599]] {
            let region = try #require(MemoryMapRegion.containing(mapping))
            #expect(region.contains(mapping))
            #expect(!region.isReadOnlySharedDataFile)
        }
    }
}
