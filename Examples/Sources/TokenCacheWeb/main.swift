import Foundation
import Hummingbird
import Logging
import TokenCacheClient
import TokenCachePostgreSQL

// token-cache-web: one host of a web farm whose hosts keep their users' tokens in one store (a directory, or a
// shared store on PostgreSQL that every host opens with the same key). See FarmRoutes for its API and README.md for
// the farm example that runs three of them.

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("token-cache-web: \(message)\n".utf8))
    exit(status)
}

// Whatever logs (the web server's warnings and errors) goes to standard error: standard output is the port's line.
LoggingSystem.bootstrap(StreamLogHandler.standardError)

let options: HostOptions
do { options = try HostOptions(arguments: Array(CommandLine.arguments.dropFirst())) } catch {
    fail("\(error)\n\(HostOptions.usage)", status: 64)
}

let clientID = "farm-client"
let statistics = HostStatistics()
let identityProvider = IdentityProviderClient(endpoint: options.identityProvider, clientID: clientID, hostName: options.name)

let client: TokenClient
let authority: Authority
do {
    authority = try Authority("https://login.microsoftonline.com/\(options.tenant)")
    // A key file is made only where none is: several hosts of one store must share one, made before they start.
    if !FileManager.default.fileExists(atPath: options.keyFile) { try KeyFile.create(at: options.keyFile) }
    let keySource = KeySource.keyFile(path: options.keyFile)
    let configuration =
        Configuration.isSharedStoreURL(options.store)
        ? try Configuration.sharedStore(options.store, keySource: keySource, timeout: options.storeTimeout)
        : Configuration(directory: options.store, keySource: keySource)
    client = try TokenClient(
        configuration: configuration,
        // Longer than a token-endpoint call may take, so that no other host redeems the token while one is redeeming.
        refreshLeaseDuration: .seconds(Int64(IdentityProviderClient.timeout) + 5),
        observability: ClientObservability(metricsFactory: TraceMetrics())
    ) { refreshToken, scopes in
        TokenSourceTrace.current?.noteRedemption()
        statistics.redemption()
        return try await identityProvider.redeem(refreshToken, scopes: scopes)
    }
} catch {
    // The kind only: a store's message may name its location.
    fail("cannot open the store: \(ErrorKind(error).kind)", status: 1)
}

let router = Router()
FarmRoutes(
    name: options.name, client: client, identityProvider: identityProvider, users: UserDirectory(clientID: clientID), statistics: statistics,
    authority: authority
).register(on: router)

var logger = Logger(label: "token-cache-web")
logger.logLevel = .warning
let app = Application(
    router: router, configuration: ApplicationConfiguration(address: .hostname(options.bind, port: options.port)),
    onServerRunning: { channel in
        // The first line on standard output, once requests are accepted: whoever started the host reads its port here.
        FileHandle.standardOutput.write(Data("listening on \(channel.localAddress?.port ?? options.port)\n".utf8))
    },
    logger: logger
)
do { try await app.runService() } catch { fail("the server stopped: \(type(of: error))", status: 1) }
