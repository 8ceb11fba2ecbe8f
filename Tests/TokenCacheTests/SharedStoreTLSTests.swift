import Foundation
import TestSupport
import Testing
import TokenCachePostgreSQL

@testable import TokenCache

/// A shared store reached over TCP with TLS that verifies the server, against a server whose certificate was made for
/// the run (`WITH_POSTGRESQL_TLS=1 Scripts/with-postgresql`: a test CA signed it for the name `localhost` only, and the
/// server refuses connections without TLS). `sslmode=verify-full` with the right CA opens the store; with another CA,
/// or under a name the certificate does not hold, the open fails within the store's timeout with an error that says
/// the certificate was not accepted, and nothing is sent.
@Suite(.enabled(if: TLSTestListener.authority != nil, "needs WITH_POSTGRESQL_TLS=1 Scripts/with-postgresql (make test runs it)"))
struct SharedStoreTLSTests {
    static var authority: (port: String, passfile: String, ca: String, otherCA: String)? { TLSTestListener.authority }

    /// The run's database over TLS at `host`, with `sslmode` and `sslrootcert`, in a schema of its own.
    static func url(host: String, mode: String = "verify-full", rootCertificate: String) throws -> String {
        let listener = try #require(authority)
        return "postgresql://tokencache@\(host):\(listener.port)/tokencache_test?passfile=\(listener.passfile)&sslmode=\(mode)"
            + "&sslrootcert=\(rootCertificate)&schema=\(PostgreSQLTestServer.uniqueSchemaName("tls"))"
    }

    /// Creates a store at `url` and reads it back; what failed, if anything, and how long it took.
    static func createStore(at url: String) throws -> (error: TokenCacheError?, seconds: Double) {
        try withTemporaryDirectory(prefix: "tc-tls") { root in
            let keyFile = root + "/key"
            try KeyFile.create(at: keyFile)
            let configuration = try Configuration.sharedStore(url, keySource: .keyFile(path: keyFile), timeout: .seconds(10))
            let started = Date()
            do {
                let cache = try TokenStore.create(configuration)
                _ = try cache.info()
                return (nil, Date().timeIntervalSince(started))
            } catch let error as TokenCacheError {
                return (error, Date().timeIntervalSince(started))
            }
        }
    }

    @Test func verifyFullWithTheCAThatSignedTheServersCertificateOpensTheStore() throws {
        let outcome = try Self.createStore(at: try Self.url(host: "localhost", rootCertificate: try #require(Self.authority).ca))
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
    }

    @Test func verifyFullWithAnotherCAIsRefusedNamingTheCertificate() throws {
        let outcome = try Self.createStore(at: try Self.url(host: "localhost", rootCertificate: try #require(Self.authority).otherCA))
        let error = try #require(outcome.error)
        #expect(error.code == .storeUnavailable, "\(error)")
        #expect(error.message.contains("TLS") && error.message.contains("certificate is not signed by a trusted root"), "\(error)")
        #expect(outcome.seconds < 10, "the refusal took \(outcome.seconds) s")
    }

    @Test func verifyFullUnderANameTheCertificateDoesNotHoldIsRefused() throws {
        let outcome = try Self.createStore(at: try Self.url(host: "127.0.0.1", rootCertificate: try #require(Self.authority).ca))
        let error = try #require(outcome.error)
        #expect(error.code == .storeUnavailable, "\(error)")
        #expect(error.message.contains("TLS") && error.message.contains("certificate does not name the host"), "\(error)")
        #expect(outcome.seconds < 10, "the refusal took \(outcome.seconds) s")
    }

    /// `verify-ca` checks the chain but not the name: the address the certificate does not name is accepted.
    @Test func verifyCAAcceptsTheRightCAUnderAnyName() throws {
        let outcome = try Self.createStore(at: try Self.url(host: "127.0.0.1", mode: "verify-ca", rootCertificate: try #require(Self.authority).ca))
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
    }
}

/// The run's TLS listener, from the environment `WITH_POSTGRESQL_TLS=1 Scripts/with-postgresql` gives.
enum TLSTestListener {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The port and password file of the run's TCP listener (from its URL) and the two CAs; nil without a TLS listener.
    static var authority: (port: String, passfile: String, ca: String, otherCA: String)? {
        guard let url = environment["TOKEN_CACHE_TEST_POSTGRESQL_TCP"], let ca = environment["TOKEN_CACHE_TEST_POSTGRESQL_TLS_CA"],
            let otherCA = environment["TOKEN_CACHE_TEST_POSTGRESQL_TLS_OTHER_CA"], let components = URLComponents(string: url),
            let port = components.port, let passfile = components.queryItems?.first(where: { $0.name == "passfile" })?.value
        else { return nil }
        return (String(port), passfile, ca, otherCA)
    }
}
