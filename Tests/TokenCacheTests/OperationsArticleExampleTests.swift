import Foundation
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheOperations

/// The snippet of TokenCacheOperations' DocC article, compiled and run: it compares as the README's snippets do
/// (``ReadmeSnippets``), so an article that drifts from the module's API fails here.
@Suite struct OperationsArticleExampleTests {
    @Test func purgeAndBackup() throws {
        try TestStore.with { store, opened in
            var expired = Samples.accessToken()
            expired.cachedAt = 1_000
            expired.expiresOn = 4_600  // long before "a week ago"
            try opened.put(expired)
            let cache: TokenStore = opened
            let backupDirectory: String = store.root + "/backup"
            // README snippet 1 begin
            // Yours: the store, opened as usual, and a new (or empty) directory for the copy.
            //   let cache: TokenStore
            //   let backupDirectory: String

            let purged = try cache.purgeExpired(olderThan: 7 * 86_400)    // tokens expired a week ago or more
            print("removed \(purged.accessTokensRemoved) access and \(purged.refreshTokensRemoved) refresh tokens")
            let copy = try cache.backup(to: backupDirectory)               // a store of its own: the same key opens it
            print("copied \(copy.bytesWritten) bytes to \(copy.directory)")
            // README snippet 1 end
            #expect(purged.accessTokensRemoved == 1)
            #expect(copy.directory == backupDirectory && copy.recordCounts[.accessToken] == 0)
        }
    }

    @Test func snippetMatchesTheArticle() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let article = try String(
            contentsOf: Repository.url("Sources/TokenCacheOperations/TokenCacheOperations.docc/TokenCacheOperations.md"), encoding: .utf8)
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { ReadmeSnippets.normalized($0.components(separatedBy: "```")[0]) }
        #expect(blocks.count == 1)
        let block = try #require(blocks.first)
        #expect(block.first == "import TokenCacheOperations")
        let problems = ReadmeSnippets.problems(block: block, number: 1, source: source, droppingImport: "import TokenCacheOperations")
        #expect(problems.isEmpty, "\(problems)")
        #expect(ReadmeSnippets.declarationsLeftToTheReader(block).count == 2)
    }
}
