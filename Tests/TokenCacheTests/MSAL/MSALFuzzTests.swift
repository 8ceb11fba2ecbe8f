import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

/// A seeded mutation fuzzer of MSAL cache documents through the reader, the mapping, the writer and a re-import.
///
/// Inputs are the six fixtures with every secret replaced by a canary, then mutated: bytes flipped, structural
/// bytes inserted, ranges deleted, duplicated or truncated, and fixtures spliced together; each is read with a
/// random chunk size. For each input: either it imports, and then exports and re-imports to equal entities; or
/// it fails with an ``MSALImportError`` whose message is non-empty and holds no canary (unless the mutation moved
/// the canary into the section name or key the message names). A crash or hang fails the run.
///
/// `TOKEN_CACHE_MSAL_FUZZ_INPUTS` (default 2,000) and `TOKEN_CACHE_MSAL_FUZZ_SEED` set the size and the seed.
@Suite struct MSALFuzzTests {
    static let canary = "SECRET-CANARY-MSAL"

    static func seeds() throws -> [[UInt8]] {
        try MSALFixtures.names.map { name in
            var index = 0
            let text = String(decoding: try MSALFixtures.bytes(name), as: UTF8.self)
            let pattern = try NSRegularExpression(pattern: #""secret": "[^"]*""#)
            var result = text
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
                let range = Range(match.range, in: text)!
                index += 1
                result.replaceSubrange(range, with: "\"secret\": \"\(canary)-\(index)\"")
            }
            return Array(result.utf8)
        }
    }

    /// One of `seeds`, mutated one to four times: a bit flipped, a structural byte inserted or written, a range
    /// deleted or duplicated, the rest cut off or replaced by another seed's.
    static func mutated(_ seeds: [[UInt8]], structural: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = seeds[Int.random(in: 0..<seeds.count, using: &random)]
        for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0: bytes[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1: bytes.insert(structural.randomElement(using: &random)!, at: at)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &random)))
            case 3: bytes.removeSubrange(at...)
            case 4: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int.random(in: 1...200, using: &random))], at: at)
            case 5:
                let other = seeds.randomElement(using: &random)!
                let from = Int.random(in: 0..<other.count, using: &random)
                bytes.replaceSubrange(at..., with: other[from...])
            default: bytes[at] = structural.randomElement(using: &random)!
            }
        }
        return bytes
    }

    static let structural = Array(#"{}[]",:"\ 0-1.eE"#.utf8) + [0x00, 0xFF, 0xC3, 0xEF]

    /// The store's side: a mutated document imports whole or not at all. Each input goes into a store already
    /// holding a cache, in batches of one to three entries (so that a late invalid entry would find earlier batches
    /// committed if the whole file were not checked first), half of them with `skipInvalid`. A rejection is
    /// `.invalidArgument` with a message that starts with "MSAL cache" and holds no canary, and leaves every record
    /// as it was. `TOKEN_CACHE_MSAL_STORE_FUZZ_INPUTS` (default 300) sets the number of inputs.
    @Test func mutatedDocumentsImportWholeOrNotAtAll() throws {
        let count = ProcessInfo.processInfo.environment["TOKEN_CACHE_MSAL_STORE_FUZZ_INPUTS"].flatMap(Int.init) ?? 300
        var random = SplitMix64(seed: 0x51_7A_C0)
        let seeds = try Self.seeds()
        var outcomes = (imported: 0, rejected: 0)
        try TestStore.with(.memory) { _, cache in
            try cache.importMSAL(from: .bytes(seeds[0]))
            var before = try MSALStoreImportTests.content(of: cache)
            for _ in 0..<count {
                let bytes = Self.mutated(seeds, structural: Self.structural, using: &random)
                let options = MSALImportOptions(skipInvalid: Bool.random(using: &random), batchSize: Int.random(in: 1...3, using: &random))
                do {
                    try cache.importMSAL(from: .bytes(bytes), options: options)
                    outcomes.imported += 1
                    before = try MSALStoreImportTests.content(of: cache)
                } catch let error as TokenCacheError {
                    outcomes.rejected += 1
                    #expect(error.code == .invalidArgument, "\(error)")
                    #expect(error.message.hasPrefix("MSAL cache"), "\(error.message)")
                    #expect(!error.message.contains(Self.canary) || error.message.contains("section \"\(Self.canary)"), "\(error.message)")
                    #expect(try MSALStoreImportTests.content(of: cache) == before)
                }
            }
        }
        #expect(outcomes.imported > 0 && outcomes.rejected > 0, "\(outcomes)")
    }

    @Test func mutatedDocumentsNeverCrashLeakOrLoseData() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["TOKEN_CACHE_MSAL_FUZZ_INPUTS"].flatMap(Int.init) ?? 2000
        let seed = environment["TOKEN_CACHE_MSAL_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x3A5F_0C1D
        var random = SplitMix64(seed: seed)
        let seeds = try Self.seeds()
        let structural = Self.structural
        let started = Date()
        var imported = 0
        var rejected: [MSALImportError.Code: Int] = [:]
        for _ in 0..<count {
            let bytes = Self.mutated(seeds, structural: structural, using: &random)
            let chunkSize = [nil, 2, 3, 64, 4096].randomElement(using: &random)!
            do {
                let fold = try MSALTestSupport.importAll(bytes, chunkSize: chunkSize)
                imported += 1
                let exported: [UInt8]
                do { exported = try MSALCacheWriter.document(fold.content, revealSecrets: true) } catch {
                    // Bound tokens that differ only in key id share an MSAL key; nothing else may fail.
                    #expect(error.code == .duplicateKey, "\(error)")
                    continue
                }
                let again = try MSALTestSupport.importAll(exported)
                #expect(MSALTestSupport.sorted(again.content) == MSALTestSupport.sorted(fold.content))
            } catch let error as MSALImportError {
                rejected[error.code, default: 0] += 1
                let message = error.description
                #expect(!error.reason.isEmpty)
                let displayed = (error.key ?? "") + (error.section ?? "")
                if !displayed.contains(Self.canary) {
                    #expect(!message.contains(Self.canary), "\(message)")
                }
            }
        }
        #expect(Date().timeIntervalSince(started) < 60)
        // The mutations reach past the syntax layer into the mapping.
        #expect(imported > 0)
        #expect(rejected[.syntax, default: 0] > 0)
        #expect(rejected.count >= 3, "\(rejected)")
    }
}
