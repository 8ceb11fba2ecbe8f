import Foundation
import Testing
import TokenCacheStorage
import TokenCacheLMDB

@testable import TokenCache
import TokenCacheRecords
@testable import TokenCacheSodium

/// `TokenCacheError` is the one error type the public API throws, and says what happened through Foundation too.
@Suite struct ErrorMappingTests {
    /// An error of a type of the caller's own, thrown from inside a transaction closure.
    struct CallerError: Error, Equatable { let detail: String }

    /// An error of a type no layer of the library throws, whose text is secret.
    struct UnexpectedError: Error, CustomStringConvertible {
        var description: String { Canary.secret }
    }

    @Test func localizedDescriptionIsTheRedactedDescription() throws {
        let notFound = try #require(throws: TokenCacheError.self) {
            try TokenStore.open(Configuration(directory: "/nonexistent/token-cache", keySource: .keyFile(path: "/nonexistent/key")))
        }
        #expect(notFound.code == .storeNotFound)
        try TestStore.with { _, cache in
            try cache.put(Samples.refreshToken(secret: Canary.secret))
            let rotated = Samples.refreshToken(secret: "rt-2")
            let conflict = try #require(throws: TokenCacheError.self) {
                try cache.replaceRefreshToken(rotated, expectedSecret: Secret("not-the-stored-one"))
            }
            #expect(conflict.code == .conflict)
            let full = TokenCacheError.wrap(StorageError(.storageFull, "the store at /tmp/store is full"), directory: "/tmp/store")
            #expect(full.code == .storageFull)
            for error in [notFound, conflict, full] {
                #expect(error.localizedDescription == error.description)
                #expect((error as any Error).localizedDescription == "\(error.code.name): \(error.message)")
                #expect(!error.localizedDescription.contains(Canary.secret))
            }
        }
    }

    @Test func libsodiumErrorsEscapingATransactionBecomeTokenCacheErrors() throws {
        let expected: [(SodiumError.Code, TokenCacheError.Code)] = [
            (.invalidLength, .internalError), (.invalidParameters, .internalError), (.invalidEncoding, .internalError),
            (.authenticationFailed, .corruptRecord), (.outOfMemory, .ioFailure), (.initializationFailed, .unsupportedEnvironment),
        ]
        try TestStore.with { _, cache in
            for (sodium, code) in expected {
                let written = try #require(throws: TokenCacheError.self) {
                    try cache.write { writer in
                        try writer.put(Samples.refreshToken(secret: Canary.secret))
                        throw SodiumError(sodium, "forced")
                    }
                }
                #expect(written.code == code)
                let read = try #require(throws: TokenCacheError.self) { try cache.read { _ in throw SodiumError(sodium, "forced") } }
                #expect(read.code == code)
                #expect(!written.description.contains(Canary.secret))
            }
            #expect(try cache.list(RefreshToken.self).records.isEmpty)  // nothing of a failed write is kept
        }
    }

    @Test func formatErrorsEscapingATransactionAreDamagedRecords() throws {
        try TestStore.with { _, cache in
            for kind in [FormatError.Kind.invalidContent, .authenticationFailure, .unsupportedVersion] {
                let written = try #require(throws: TokenCacheError.self) {
                    try cache.write { _ in throw FormatError("field 3 is not valid JSON", kind: kind) }
                }
                #expect(written.code == .corruptRecord && written.message.contains("field 3 is not valid JSON"))
                let read = try #require(throws: TokenCacheError.self) { try cache.read { _ in throw FormatError("short") } }
                #expect(read.code == .corruptRecord)
            }
        }
    }

    @Test func theCallersOwnErrorsComeBackUnchanged() throws {
        try TestStore.with { _, cache in
            #expect(throws: CallerError(detail: "w")) { try cache.write { _ in throw CallerError(detail: "w") } }
            #expect(throws: CallerError(detail: "r")) { try cache.read { _ in throw CallerError(detail: "r") } }
        }
    }

    @Test func anErrorOfAnUnexpectedTypeIsAnInternalErrorWithoutItsText() {
        let error = TokenCacheError.wrap(UnexpectedError(), directory: "/tmp/store")
        #expect(error.code == .internalError)
        #expect(error.message.contains("UnexpectedError") && !error.description.contains(Canary.secret))
        let passed = TokenCacheError(.conflict, "kept")
        #expect(TokenCacheError.wrap(passed, directory: "/tmp/store").message == "kept")
    }

    #if DEBUG
    /// A caller that catches inside its closure gets the public error from the writer's methods, not LMDB's.
    @Test func writerMethodsThrowTokenCacheErrorsInsideTheClosure() throws {
        try TestStore.with { store, cache in
            let environment = try store.environment()
            defer { LMDBFaultInjection.disarm(environment) }
            LMDBFaultInjection.arm(.put, on: environment, failingWith: .ioError)
            let outside = try #require(throws: TokenCacheError.self) {
                try cache.write { writer in
                    do {
                        try writer.put(Samples.refreshToken(secret: Canary.secret))
                        Issue.record("the injected fault did not fire")
                    } catch {
                        let inside = try #require(error as? TokenCacheError)
                        #expect(inside.code == .ioFailure && !inside.description.contains(Canary.secret))
                    }
                }
            }
            #expect(outside.code == .ioFailure)  // LMDB refuses to commit a transaction whose put failed
        }
    }
    #endif
}
