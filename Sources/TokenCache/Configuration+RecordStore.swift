internal import TokenCacheStorage

extension Configuration {
    /// This configuration in the record store's terms: the facade translates, so that the store depends on neither
    /// the public configuration nor the key sources (its root key comes through ``ConfiguredRootKey``).
    package var storeOptions: RecordStore.Options {
        var options = RecordStore.Options(
            storage: storage, name: directory, readOnly: readOnly, aliases: environmentAliases, rootKey: ConfiguredRootKey(self),
            cipher: cipher?.recordCipher
        )
        options.finishesRotation = finishesRotation
        return options
    }
}
