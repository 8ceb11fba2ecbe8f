import Foundation

/// One line of `/proc/self/maps`: a mapping of this process's address space.
struct MemoryMapRegion: Equatable {
    var start: UInt
    var end: UInt
    /// `r--s`, `rw-p`, …
    var permissions: String
    var path: String

    /// A mapping LMDB made of a store's data file for reading (`PROT_READ`, `MAP_SHARED`).
    var isReadOnlySharedDataFile: Bool { permissions == "r--s" && path.hasSuffix("/data.mdb") }

    func contains(_ address: UnsafeRawPointer) -> Bool {
        (start..<end).contains(UInt(bitPattern: address))
    }

    /// The mapping that holds `address`; nil if none does or `/proc/self/maps` cannot be read.
    static func containing(_ address: UnsafeRawPointer) -> MemoryMapRegion? {
        guard let text = readWholeFile("/proc/self/maps") else { return nil }
        let target = UInt(bitPattern: address)
        for line in text.split(separator: "\n") {
            guard let region = parse(line), region.start <= target, target < region.end else { continue }
            return region
        }
        return nil
    }

    /// A file read to its end. The kernel hands `/proc/self/maps` out a page at a time and says nothing of its size
    /// (`stat` gives 0), and a single read of it returns only the first few dozen mappings: readers that stop at the
    /// first short read (as `String(contentsOfFile:)` does here) miss the rest, which in a process with many threads
    /// or libraries holds the store's map.
    static func readWholeFile(_ path: String) -> Substring? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return Substring(String(decoding: bytes, as: UTF8.self))
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
