package import TokenCacheStorage

extension Configuration {
    /// Where the store's records live and which backend keeps them: the one place a backend is chosen. Every open,
    /// creation and maintenance operation (compact, quarantine, backup, salvage) starts from here and goes on through
    /// the storage seam alone (`StorageLocation`, `RecordBackend` and their capabilities), so a new kind of backend
    /// is chosen here and named nowhere else in the library (`StorageSeamTests` checks the sources for it).
    package var storage: any StorageLocation {
        if let storageLocation { return storageLocation }
        if isInMemory { return InMemoryStorageLocation(name: directory) }
        var options = LMDBRecordBackend.Options(
            directory: directory, initialMapSize: initialMapSize, maximumMapSize: maximumMapSize, readOnly: readOnly,
            allowNetworkFilesystem: allowNetworkFilesystem
        )
        options.reservedMapSize = reservedMapSize
        options.lockTimeout = lockTimeout
        return LMDBStorageLocation(options)
    }
}
