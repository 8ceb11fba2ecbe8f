import ArgumentParser
import TokenCache

/// The options that give a request's extended cache key (MSAL's `ext_cache_key`), for the commands that store or look
/// up an access token: the key itself, or the request's extra body parameters it is derived from.
struct ExtendedKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("ext-cache-key"),
        help: ArgumentHelp("The extended cache key of a token obtained with extra request parameters (MSAL's ext_cache_key).", valueName: "key")
    )
    var extendedCacheKey: String?

    @Option(
        name: .customLong("parameter"),
        help: ArgumentHelp(
            "An extra body parameter of the request, e.g. fmi_path=Some/Path (repeatable): the extended cache key is derived from them as MSAL derives it.",
            valueName: "name=value"
        )
    )
    var parameters: [String] = []

    /// The key given, or derived from the `--parameter`s; nil for neither, or for parameters that are all standard
    /// OAuth ones (which MSAL does not key by either).
    func key() throws -> ExtendedCacheKey? {
        if extendedCacheKey != nil && !parameters.isEmpty { throw ValidationError("--ext-cache-key cannot be combined with --parameter") }
        if let extendedCacheKey {
            do { return try ExtendedCacheKey(extendedCacheKey) } catch { throw ValidationError("--ext-cache-key: \(error.message)") }
        }
        guard !parameters.isEmpty else { return nil }
        return ExtendedCacheKey(parameters: try Arguments.parameters(parameters, option: "--parameter"))
    }

    func validate() throws { _ = try key() }
}
