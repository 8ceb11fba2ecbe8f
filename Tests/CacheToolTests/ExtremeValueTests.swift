import Foundation
import Testing
import TokenCache

/// Times at the edges of `Int64`, stored in records or given as `--now`, are shown, never a crash.
@Suite struct ExtremeValueTests {
    @Test(arguments: [Int64.min, Int64.min + 1, -1, 0, Int64.max - 1, Int64.max])
    func extremeTimesAreDisplayedWithoutCrashing(now: Int64) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            try cache.write { writer in
                for (index, time) in [Int64.min, -1, 0, Int64.max].enumerated() {
                    try writer.put(AccessToken(
                        homeAccountID: "u.t", environment: "login.microsoftonline.com", clientID: "c", realm: "t",
                        target: "s\(index)", secret: Secret("AT-\(index)"), cachedAt: time, expiresOn: time,
                        extendedExpiresOn: time, refreshOn: time
                    ))
                }
            }
            let lookupArguments = ["lookup", "--client-id", "c", "--account", "u.t", "--authority",
                                   "https://login.microsoftonline.com/t", "--scopes", "s3", "--now=\(now)"]
            for arguments in [["inspect", "--now=\(now)"], ["inspect", "--json", "--now=\(now)"], lookupArguments, ["verify"]] {
                let run = try store.run(arguments)
                #expect(run.exitedNormally, "\(arguments[0]) --now=\(now) crashed: \(run.output)")
                #expect(run.status == 0, "\(arguments): \(run.output)")
            }
            let table = try store.run(["inspect", "--now=\(now)"]).stdout
            if now == Int64.min {
                #expect(table.contains("in 106751991167300 d"), "\(table)")  // Int64.max − Int64.min seconds
            } else if now == Int64.max {
                #expect(table.contains("expired 106751991167300 d ago"), "\(table)")
            }
        }
    }
}
