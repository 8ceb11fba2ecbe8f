import Foundation

/// One line of `/proc/self/maps`: a mapping of this process's address space.
struct MemoryMapRegion: Equatable {
    var start: UInt
    var end: UInt
    /// `r--s`, `rw-p`, …
    var permissions: String
    var path: String

    /// A mapping LMDB made of a store's data file for reading (`PROT_READ`, `MAP_SHARED`).
    var isReadOnlySharedDataFile: Bool { permissions == "r--s" && path.hasSuffix("/" + StoreFileName.data) }

    func contains(_ address: UnsafeRawPointer) -> Bool {
        (start..<end).contains(UInt(bitPattern: address))
    }

    /// The mapping that holds `address`; nil if none does or `/proc/self/maps` cannot be read.
    static func containing(_ address: UnsafeRawPointer) -> MemoryMapRegion? {
        guard let text = FileSystem.readWholeFile("/proc/self/maps") else { return nil }
        let target = UInt(bitPattern: address)
        for line in text.split(separator: "\n") {
            guard let region = parse(line), region.start <= target, target < region.end else { continue }
            return region
        }
        return nil
    }

    /// `start-end perms offset dev inode path` (the path may be absent or hold spaces).
    static func parse(_ line: Substring) -> MemoryMapRegion? {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5 else { return nil }
        let bounds = fields[0].split(separator: "-")
        guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16) else { return nil }
        let path = fields.count == 6 ? fields[5].trimmingCharacters(in: .whitespaces) : ""
        return MemoryMapRegion(start: start, end: end, permissions: String(fields[1]), path: path)
    }
}
