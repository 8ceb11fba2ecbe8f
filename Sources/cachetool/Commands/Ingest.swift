import ArgumentParser
import Foundation
import TokenCache

/// `cachetool ingest`: store a raw token-endpoint response the way an auth client would.
struct Ingest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store a raw OAuth2/OIDC token response (access, refresh and ID token, account, app metadata) in one transaction.",
        discussion: "The response is read from RESPONSE_FILE, or from standard input when it is '-' or absent."
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("client-id"), help: "The client (application) id the token was issued to.")
    var clientID: String

    @Option(help: "The authority URL the request went to, e.g. https://login.microsoftonline.com/common.")
    var authority: String

    @Option(help: "The scopes that were requested, separated by spaces or commas.")
    var scopes: String

    @Option(name: .customLong("grant-type"), help: "The grant of the request (authorization_code, refresh_token, client_credentials, …).")
    var grantType: String?

    @Option(help: ArgumentHelp("Request time in Unix seconds (default: now).", valueName: "seconds"))
    var now: Int64?

    @OptionGroup var extended: ExtendedKeyOptions

    @OptionGroup var onBehalfOf: OnBehalfOfOptions

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: ArgumentHelp("The token response JSON file, or '-' for standard input.", valueName: "response-file"))
    var responseFile: String?

    func validate() throws {
        for (value, option) in [(clientID, "--client-id"), (authority, "--authority"), (scopes, "--scopes")] {
            try Arguments.requireNonEmpty(value, option)
        }
        try Arguments.requireNonEmpty(responseFile, "the RESPONSE-FILE argument (name a file, or '-' for standard input)")
    }

    func run() throws {
        try Failure.reporting {
            let data: Data
            if let responseFile, responseFile != "-" {
                guard let contents = FileManager.default.contents(atPath: responseFile) else {
                    throw ValidationError("cannot read the response file \(responseFile)")
                }
                data = contents
            } else {
                if isatty(STDIN_FILENO) == 1 {
                    // Otherwise the command just waits, with no sign of what for.
                    Output.note("paste the token response (JSON), then press Ctrl-D on an empty line")
                }
                data = FileHandle.standardInput.readDataToEndOfFile()
            }
            let response = try TokenResponse(json: data)
            let context = TokenRequestContext(
                clientID: clientID, authority: try Arguments.authority(authority), requestedScopes: Arguments.scopes(scopes),
                grantType: grantType, now: now ?? Int64(Date().timeIntervalSince1970), extendedCacheKey: try extended.key(),
                onBehalfOf: try onBehalfOf.partition()
            )
            let cache = try TokenStore.open(options.configuration(readOnly: false))
            let result = try cache.ingest(response, context: context)
            if json {
                print(
                    JSONValue.object([
                        "home_account_id": .string(result.homeAccountID),
                        "environment": .string(result.accessToken.environment),
                        "realm": .string(result.accessToken.realm),
                        "client_id": .string(result.accessToken.clientID),
                        "target": .string(result.accessToken.target),
                        "ext_cache_key": result.accessToken.extendedCacheKey.map { .string($0) } ?? .null,
                        "user_assertion_hash": result.accessToken.userAssertionHash.map { .string($0) } ?? .null,
                        "access_token_revision": .integer(Int64(result.accessTokenRevision)),
                        "refresh_token_revision": result.refreshTokenRevision.map { .integer(Int64($0)) } ?? .null,
                        "access_tokens_removed": .integer(Int64(result.accessTokensRemoved)),
                        "expired_access_tokens_swept": .integer(Int64(result.expiredAccessTokensSwept)),
                        "access_tokens_evicted": .integer(Int64(result.accessTokensEvicted)),
                    ]).prettyPrinted()
                )
            } else {
                let account = result.homeAccountID.isEmpty ? "the application (client credentials)" : "account \(result.homeAccountID)"
                print(Terminal.sanitize(
                    "Stored the response for \(account) in realm \(result.accessToken.realm) "
                        + (result.accessToken.extendedCacheKey.map { "under the extended cache key \($0) " } ?? "")
                        + "(access token revision \(result.accessTokenRevision)"
                        + (result.refreshTokenRevision.map { ", refresh token revision \($0)" } ?? "")
                        + "; \(result.accessTokensRemoved) superseded access token(s) removed)."
                        + (result.expiredAccessTokensSwept > 0 ? " Swept \(result.expiredAccessTokensSwept) expired access token(s) of other buckets." : "")
                        + (result.accessTokensEvicted > 0 ? " Evicted \(result.accessTokensEvicted) access token(s) to stay under the store's cap." : "")
                ))
            }
        }
    }
}
