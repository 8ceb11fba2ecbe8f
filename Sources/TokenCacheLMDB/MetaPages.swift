#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The transaction ids of LMDB's two meta pages, read from the file, and whether they agree with each other.
///
/// LMDB 0.9 writes the meta record of transaction `t` into meta page `t mod 2`, and picks the page with the larger
/// id when it opens the file. So on a healthy store page 0 holds an even id and page 1 an odd one, and the two
/// differ by exactly one (before the first commit both hold 0). LMDB keeps no checksum of a meta page: if damage
/// lowers the id of the newer page, LMDB silently opens the older one, and the last committed transaction is gone
/// (the next commit then overwrites the damaged page, and the evidence). Such damage breaks the pattern above
/// unless it makes the newer id exactly two smaller (the older page's id minus one, same parity), which a single
/// flipped bit does only by clearing bit 1.
package struct MetaPages: Sendable, Hashable {
    package let page0: UInt64
    package let page1: UInt64

    package init(page0: UInt64, page1: UInt64) {
        self.page0 = page0
        self.page1 = page1
    }

    /// Whether the two ids are what LMDB's alternation leaves.
    package var areConsistent: Bool {
        let (even, odd) = (page0, page1)
        if even == 0 && odd == 0 { return true }
        let distance = even > odd ? even - odd : odd - even
        return even % 2 == 0 && odd % 2 == 1 && distance == 1
    }

    /// Offset of `mm_txnid` in a meta page: the 16-byte page header, then `MDB_meta`'s magic and version (4 + 4),
    /// fixed address and map size (8 + 8) and its two 48-byte database records, and the last page number (8).
    static let transactionIDOffset = 16 + 4 + 4 + 8 + 8 + 2 * 48 + 8
}

extension Environment {
    /// Reads both meta pages' transaction ids from `data.mdb` with `pread` on LMDB's own descriptor (no second
    /// descriptor of the file is opened, so LMDB's locks are untouched). Another process may commit between the two
    /// reads, so they are repeated until two rounds agree.
    package func metaPages() throws(LMDBError) -> MetaPages {
        guard let fd = lmdb_env_get_fd(handle) else { throw .invalidArgument }
        let pageSize = withSharedGate { lmdb_env_page_size(handle) }
        func id(ofPage page: Int) throws(LMDBError) -> UInt64 {
            var value: UInt64 = 0
            let count = pread(fd, &value, 8, off_t(page * pageSize + MetaPages.transactionIDOffset))
            guard count == 8 else { throw count < 0 ? LMDBError(code: errno) : .truncatedDataFile }
            return UInt64(littleEndian: value)
        }
        var previous = MetaPages(page0: try id(ofPage: 0), page1: try id(ofPage: 1))
        for _ in 0..<100 {
            let current = MetaPages(page0: try id(ofPage: 0), page1: try id(ofPage: 1))
            if current == previous { return current }
            previous = current
        }
        return previous
    }
}
