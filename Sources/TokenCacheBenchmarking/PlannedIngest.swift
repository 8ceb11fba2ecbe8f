public import TokenCache

extension TokenStore {
    /// ``TokenStore/ingest(_:context:)`` through the async path of the storage seam: the ingest's read plan fetched in
    /// one call and its write plan applied in one call (the package's `ingestApplyingPlan`), as a shared store on a
    /// server is written without a transaction held open across round trips.
    ///
    /// Why SPI: the planned path is `package` access, which the shared-store benchmark (Benchmarks/SharedStore, a
    /// package of its own) cannot reach, and it is not an app API. This forwards the call and adds nothing to it.
    @_spi(Benchmarking)
    @discardableResult
    public func ingestThroughWritePlan(_ response: TokenResponse, context: TokenRequestContext) async throws -> IngestResult {
        try await ingestApplyingPlan(response, context: context)
    }
}
