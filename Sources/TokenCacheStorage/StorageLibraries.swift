internal import TokenCacheLMDB

/// The libraries the storage backends run on, as this process loaded them: for version output and bug reports, which
/// name them whichever backend a store uses (they are linked into every build).
package enum StorageLibraries {
    /// liblmdb's `mdb_version()` text, e.g. `LMDB 0.9.24: (July 24, 2019)`.
    package static var lmdb: String { Environment.libraryVersion }
}
