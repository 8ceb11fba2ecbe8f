/// What each module and each layer of the package may use: the tables `ArchitectureTests` checks the sources against,
/// as allowlists. Docs/Architecture.md says why; edit both together.
enum ArchitectureRules {
    /// Every module under `Sources/` → the modules its files may import. A module missing here, or an entry with no
    /// module, fails the test: a new module needs a decision about what it may see.
    static let moduleImports: [String: Set<String>] = [
        // C targets: no Swift, so no import lines to check.
        "CLMDB": [], "CSodium": [], "CCrashGuard": [], "CCacheToolStartup": [], "CBenchProbes": [], "CChildLifetime": [],
        "CDisplayWidth": [], "CBase64URL": [],
        // The only Swift that sees the C libraries.
        "TokenCacheLMDB": ["CLMDB", "Foundation", "Dispatch", "Synchronization", "Glibc", "Darwin", "Musl"],
        "TokenCacheSodium": ["CSodium", "Glibc", "Darwin", "Musl"],
        // The storage seam: LMDB through its wrapper, nothing of the domain, not even Foundation.
        "TokenCacheStorage": ["TokenCacheLMDB", "Synchronization", "Glibc", "Darwin", "Musl"],
        // The record format: libsodium through its wrapper, no entity, no backend.
        "TokenCacheRecords": ["TokenCacheSodium", "CBase64URL", "Foundation", "Glibc", "Darwin", "Musl"],
        // The entities and the rules: nothing of the format but its ASCII folding, of libsodium but its wiping.
        "TokenCacheModel": ["TokenCacheRecords", "TokenCacheSodium", "Foundation"],
        // The library reaches storage through the seam alone, never LMDB.
        "TokenCache": [
            "TokenCacheModel", "TokenCacheRecords", "TokenCacheStorage", "TokenCacheSodium", "CCrashGuard", "Foundation", "Synchronization",
            "Glibc", "Darwin", "Musl",
        ],
        // On the library's API (and the format and seam modules, as the library's package API hands them out).
        "TokenCacheMSAL": ["TokenCache", "TokenCacheRecords", "TokenCacheStorage", "Foundation", "Glibc", "Darwin", "Musl"],
        "TokenCacheBenchmarking": [
            "TokenCache", "TokenCacheMSAL", "TokenCacheRecords", "TokenCacheStorage", "TokenCacheSodium", "Foundation", "Glibc", "Darwin", "Musl",
        ],
        // An operator's commands: the library's package API and the seam's maintenance protocols, never LMDB.
        "TokenCacheOperations": [
            "TokenCache", "TokenCacheRecords", "TokenCacheStorage", "TokenCacheSodium", "Foundation", "Glibc", "Darwin", "Musl",
        ],
        // The client: the library's API, and the logging and metrics packages the core stays free of.
        "TokenCacheClient": ["TokenCache", "Logging", "Metrics", "Foundation", "Dispatch", "Synchronization", "Glibc", "Darwin", "Musl"],
        // The shared store: a backend of the seam on PostgreSQL, and the only module that sees NIO.
        "TokenCachePostgreSQL": [
            "TokenCache", "TokenCacheStorage", "TokenCacheSodium", "PostgresNIO", "NIOCore", "NIOPosix", "NIOSSL", "Logging", "Metrics", "Foundation", "Synchronization",
            "Glibc", "Darwin", "Musl",
        ],
        "cachetool": [
            "TokenCache", "TokenCacheMSAL", "TokenCacheOperations", "TokenCacheBenchmarking", "TokenCacheClient", "TokenCachePostgreSQL", "ArgumentParser",
            "CBenchProbes", "CChildLifetime", "CDisplayWidth", "Foundation", "Dispatch", "Synchronization", "Glibc", "Darwin", "Musl",
        ],
    ]

    /// A layer of the library (Docs/Architecture.md, "Layers inside TokenCache": folders of `TokenCacheModel` and
    /// `TokenCache`), a module on its API, or a module below it whose declarations a layer may name.
    struct Layer {
        let name: String
        /// Its files: folders or files under `Sources/`, all in one module. A file belongs to the layer with the
        /// longest source that is the file or holds it, so the facade (`TokenCache`) has the files at the library's
        /// root.
        let sources: [String]
        /// The layers whose declarations it may use, besides its own: a name grants that layer and, in turn, the
        /// layers that layer knows; `"Layer.Name"` grants that one declaration alone (to this layer only).
        let knows: [String]
        /// The modules of the platform its files may import (the package's modules come with `knows`).
        let platform: Set<String>

        init(_ name: String, sources: [String], knows: [String], platform: Set<String> = ArchitectureRules.platform) {
            self.name = name
            self.sources = sources
            self.knows = knows
            self.platform = platform
        }
    }

    static let platform: Set<String> = ["Foundation", "Dispatch", "Synchronization", "Glibc", "Darwin", "Musl"]

    /// Top to bottom, as Docs/Architecture.md lists them. In a module of several layers, every folder must be one
    /// layer's.
    static let layers: [Layer] = [
        Layer(
            "Facade", sources: ["TokenCache"],
            knows: ["Flows", "Interop", "Store", "Codecs", "Keys", "Files", "Rules", "Model", "TokenCacheRecords", "TokenCacheStorage", "TokenCacheSodium"],
            platform: platform.union(["CCrashGuard"])),
        // Modules on the library's API: MSAL import and export, and the SPI for `cachetool bench` (no lookup or write
        // path calls either, so the facade knows neither).
        Layer("MSAL", sources: ["TokenCacheMSAL"], knows: ["Facade"]),
        // TokenCacheSodium: the floor of the other cipher re-seals sampled records under a throwaway key.
        Layer("Benchmarking", sources: ["TokenCacheBenchmarking"], knows: ["Facade", "Store", "Interop", "MSAL", "TokenCacheSodium"]),
        // An operator's commands on a whole store (no lookup or write path calls them either): the facade, and through
        // it the store, flows (verify's findings) and keys, as the library's package API hands them out.
        Layer("Operations", sources: ["TokenCacheOperations"], knows: ["Facade"]),
        // The table's row says rules, store, model; the flows it draws (ingest's plan) derive through interop.
        Layer("Flows", sources: ["TokenCache/Flows"], knows: ["Rules", "Store", "Model", "Interop"]),
        // Pure functions of model values; of the record module, its one ASCII folding (FORMAT.md's `ascii_lower`).
        Layer("Rules", sources: ["TokenCacheModel/Rules"], knows: ["Model", "TokenCacheRecords.ASCII"], platform: []),
        // Of the record module, its ASCII folding and its base64url decoder: one of each in the library. Of the Sodium
        // wrapper, SHA-256, which MSAL's extended cache key is defined by.
        Layer(
            "Interop", sources: ["TokenCache/Interop"],
            knows: ["Rules", "Model", "TokenCacheRecords.ASCII", "TokenCacheRecords.Base64URL", "TokenCacheSodium.SHA256"]),
        // The record store and its transactions (the public `CacheReader`/`CacheWriter`), opened from store-level
        // options: its root key comes through `RootKeyProviding`, which the facade answers from its configuration.
        Layer("Store", sources: ["TokenCache/Store"], knows: ["Codecs", "Files", "TokenCacheRecords", "TokenCacheStorage"]),
        Layer("Codecs", sources: ["TokenCache/Codecs"], knows: ["Model", "Rules", "TokenCacheRecords"]),
        // A passphrase is a secret and every failure the one error type; key files are read through the one file-system
        // helper.
        Layer("Keys", sources: ["TokenCache/Keys"], knows: ["Files", "Model", "TokenCacheSodium", "TokenCacheRecords"]),
        // The one file-system helper of the library (the LMDB wrapper keeps its own, below the seam): errors name the
        // path and the fix, as the one error type.
        Layer("Files", sources: ["TokenCache/Files"], knows: ["Model"]),
        // Plain values and the one error type. Below it, the record module's ASCII folding, and the Sodium wrapper's
        // wiping and constant-time comparison of a secret's bytes.
        Layer(
            "Model", sources: ["TokenCacheModel/Model", "TokenCacheModel/TokenCacheError.swift"],
            knows: ["TokenCacheRecords.ASCII", "TokenCacheSodium.Memory", "TokenCacheSodium.ConstantTime"], platform: ["Foundation"]),
        // The modules below the library (their own imports are `moduleImports`').
        Layer("TokenCacheRecords", sources: ["TokenCacheRecords"], knows: ["TokenCacheSodium", "CBase64URL"]),
        Layer("TokenCacheStorage", sources: ["TokenCacheStorage"], knows: []),
        Layer("TokenCacheSodium", sources: ["TokenCacheSodium"], knows: []),
    ]

    /// Files held to less than their layer: path → exactly the layers (not what those know) and declarations it may
    /// use.
    static let files: [String: [String]] = [
        // A lookup is planned and judged without the store: no record store, seam, reader or keyring; of the store,
        // only the view of a sealed summary the fetch hands it.
        "TokenCache/Flows/SilentLookupPlan.swift": ["Rules", "Model", "Codecs", "Store.AccessTokenSummaryView", "TokenCacheRecords.BlindIndex"],
        "TokenCache/Flows/AccessTokenChoice.swift": ["Rules", "Model", "Store.AccessTokenSummaryView", "TokenCacheRecords.FormatError"],
    ]

    /// Today's uses against the tables, to be removed one by one: file → the names it uses that its layer may not
    /// (`import M` for an import). A use against the tables that is not listed fails the test, and so does an entry
    /// that is no longer such a use: delete it when its edge goes. None today: a new one is a back-edge to argue for.
    static let knownExceptions: [String: Set<String>] = [:]
}
