import CLMDB

/// The filesystem a store would live on, for LMDB's rule (lmdb.h, caveats): "Do not use LMDB databases on
/// remote filesystems, even between processes on the same host." Its locks and the coherence of its memory
/// map assume a local filesystem.
package enum FilesystemKind {
    /// `statfs(2)` magic numbers of filesystems that are remote or user-space (coherence not guaranteed).
    private static let unsupported: [UInt64: String] = [
        0x6969: "NFS", 0x517B: "SMB", 0xFF53_4D42: "CIFS", 0xFE53_4D42: "SMB2", 0x6573_5546: "FUSE",
        0x0102_1997: "9P", 0x0BD0_0BD0: "Lustre", 0x4750_4653: "GPFS", 0x0000_564C: "NCP", 0x7375_7245: "Coda",
        0x5346_414F: "AFS",
    ]

    /// The name of the unsupported filesystem `path` is on, or nil if it is local (or cannot be determined).
    package static func unsupportedFilesystem(at path: String) -> String? {
        var info = statfs()
        guard statfs(path, &info) == 0 else { return nil }
        let magic = UInt64(UInt(bitPattern: Int(info.f_type)) & 0xFFFF_FFFF)
        return unsupported[magic]
    }
}
