/// Verification in a read transaction of its own (``CacheReader/verify(progress:)``, in `Flows/Verify.swift`).
extension TokenStore {
    /// See ``CacheReader/verify(progress:)``.
    public func verify(progress: ((Int) -> Void)? = nil) throws -> VerificationReport { try read { try $0.verify(progress: progress) } }
}
