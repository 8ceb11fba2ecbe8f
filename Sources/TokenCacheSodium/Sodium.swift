internal import CSodium

/// Process-wide libsodium state.
///
/// Every other API in this module initializes libsodium on first use, so calling ``initialize()`` explicitly is only
/// needed to surface an initialization failure early (for example at program start).
package enum Sodium {
    /// The result of the one `sodium_init()` call this process makes.
    ///
    /// A `static let` is initialized exactly once, thread-safely, on first access. sodium.h: `sodium_init()` "returns 0
    /// on success, -1 on failure, and 1 if the library had already been initialized". It may block early in boot until
    /// the kernel RNG is seeded.
    private static let initializationResult: Int32 = sodium_init()

    /// Initializes libsodium once per process.
    ///
    /// Safe to call repeatedly and from several threads; after the first call it only reads a stored result. A result of
    /// 1 ("already initialized", for example by another library in the process) is success.
    ///
    /// - Throws: A ``SodiumError`` with code ``SodiumError/Code/initializationFailed`` if `sodium_init()` returned -1.
    ///
    /// The corresponding libsodium function is `sodium_init`.
    package static func initialize() throws(SodiumError) {
        guard initializationResult >= 0 else {
            throw SodiumError(.initializationFailed, "sodium_init() failed; libsodium is unusable in this process")
        }
    }

    /// Initializes libsodium for APIs that cannot throw, stopping the process if that is impossible.
    ///
    /// `sodium_init()` failing leaves no usable random number generator; libsodium itself aborts in that state.
    static func initializeOrTrap() {
        do {
            try initialize()
        } catch {
            fatalError("\(error)")
        }
    }

    /// The version of the libsodium library loaded at run time, for example `"1.0.18"`.
    ///
    /// The corresponding libsodium function is `sodium_version_string`.
    package static var versionString: String {
        // SAFETY: sodium_version_string() returns a pointer to a static NUL-terminated string.
        String(cString: sodium_version_string())
    }
}
