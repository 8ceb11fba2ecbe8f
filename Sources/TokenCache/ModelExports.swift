/// The entities, their errors and the values a caller passes to the store are declared in `TokenCacheModel`; an app
/// that writes `import TokenCache` names them (`AccessToken`, `TokenCacheError`, …), so this module re-exports that
/// one. It is the library's only re-export.
@_exported public import TokenCacheModel
