internal import TokenCacheMSAL
public import TokenCache
import Foundation

extension SyntheticPopulation {
    /// The size in bytes of ``TokenStore/exportMSAL(options:to:)`` of a store holding this population (whose
    /// records may since have been replaced by ingests of ``tokenResponse(number:)``), computed without holding
    /// the whole cache in memory: the whole-cache export holds every entity at once (about 12 GB at a million access
    /// tokens), this holds one account's.
    ///
    /// How: the export's layout is fixed (FORMAT of `MSALCacheWriter`: five sections, each `{}` when empty or
    /// `{`, its entries each after a 5- or 6-byte separator, `\n  }`), so a document's size is the size of the
    /// empty document, plus 2 for each non-empty section, plus the entries' own bytes (each counted with a 6-byte
    /// separator). Each account's slice (`RecordFilter(homeAccountID:)`) is exported and its entries' bytes kept;
    /// app metadata, in no account's slice, is written on its own. Exact for stores whose every credential has
    /// a home account id, as this population's has; the tests compare it with the whole export.
    public func msalExportByteCount(of cache: TokenStore, includeSecrets: Bool) throws -> Int {
        func size(_ content: MSALCacheContent) throws -> Int {
            var count = 0
            do { try MSALCacheWriter.write(content, revealSecrets: includeSecrets) { count += $0.count } } catch {
                throw TokenCacheError(.invalidArgument, "\(error)")
            }
            return count
        }
        let empty = try size(MSALCacheContent())
        /// The entries' bytes of some exports, and the kinds they hold.
        struct Tally: Sendable {
            var entryBytes = 0
            var nonEmptyKinds = Set<EntityKind>()

            mutating func add(_ bytes: Int, written: [EntityKind: Int], empty: Int) {
                let kinds = written.filter { $0.value > 0 }.keys
                nonEmptyKinds.formUnion(kinds)
                entryBytes += bytes - empty - 2 * kinds.count
            }
        }
        // The accounts' exports are independent reads: split over the cores.
        let parts = max(1, min(ProcessInfo.processInfo.activeProcessorCount, accounts))
        final class Part: @unchecked Sendable { var tally: Result<Tally, any Error>? }  // each written by one thread
        let results = (0..<parts).map { _ in Part() }
        let population = self
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            results[part].tally = Result {
                var tally = Tally()
                for index in stride(from: part, to: population.accounts, by: parts) {
                    var bytes = 0
                    let filter = RecordFilter(homeAccountID: population.account(index).homeAccountID)
                    let report = try cache.exportMSAL(options: MSALExportOptions(includeSecrets: includeSecrets, filter: filter)) {
                        bytes += $0.count
                    }
                    tally.add(bytes, written: report.written, empty: empty)
                }
                return tally
            }
        }
        var total = Tally()
        for part in results {
            let tally = try part.tally!.get()
            total.entryBytes += tally.entryBytes
            total.nonEmptyKinds.formUnion(tally.nonEmptyKinds)
        }
        var metadata = MSALCacheContent()
        metadata.appMetadata = try cache.list(AppMetadata.self).records.map(\.entity)
        total.add(try size(metadata), written: [.appMetadata: metadata.appMetadata.count], empty: empty)
        return empty + 2 * total.nonEmptyKinds.count + total.entryBytes
    }
}
