internal import TokenCacheSodium

/// Runs a libsodium-wrapper call and maps its failure into the library's error type.
enum SodiumCall {
    static func run<T>(
        _ body: () throws -> T,
        orElse makeError: () -> TokenCacheError = { TokenCacheError(.ioFailure, "a cryptographic operation failed") }
    ) throws(TokenCacheError) -> T {
        do {
            return try body()
        } catch let error as TokenCacheError {
            throw error
        } catch let error as SodiumError where error.code == .outOfMemory {
            throw TokenCacheError(.ioFailure, "out of memory for key material (\(error.message))")
        } catch {
            throw makeError()
        }
    }
}
