import ArgumentParser
import TokenCache

/// `cachetool info`: facts about a store, no secrets and no identifiers.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the store's format, size, keys and record counts.")

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try Failure.reporting {
            let info = try TokenStore.open(options.configuration(readOnly: true)).info()
            var counts: [String: JSONValue] = [:]
            for kind in EntityKind.allCases { counts[kind.rawValue] = .integer(Int64(info.recordCounts[kind] ?? 0)) }
            let fields: [(String, JSONValue)] = [
                ("directory", .string(info.directory)),
                ("store_id", .string(info.storeID)),
                ("format_read_version", .integer(Int64(info.readVersion))),
                ("format_write_version", .integer(Int64(info.writeVersion))),
                ("key_protection", .string(info.keyProtection)),
                ("data_keys", .integer(Int64(info.dataKeyCount))),
                ("active_data_key", .integer(Int64(info.activeDataKeyID))),
                // Whether this build can write the store at all; `info` itself always opens it read-only.
                ("read_only", .bool(!info.formatWritable)),
                ("map_size", .integer(Int64(info.mapSize))),
                ("maximum_map_size", .integer(Int64(info.maximumMapSize))),
                ("used_bytes", .integer(Int64(info.usedBytes))),
                ("readers", .string("\(info.readersInUse)/\(info.maxReaders)")),
                ("lmdb_version", .string(info.lmdbVersion)),
                ("libsodium_version", .string(info.sodiumVersion)),
                ("records", .object(counts)),
            ]
            if json {
                print(JSONValue.object(Dictionary(uniqueKeysWithValues: fields)).prettyPrinted())
                return
            }
            for (name, value) in fields {
                if case .string(let text) = value { print("\(name): \(Terminal.sanitize(text))") } else { print("\(name): \(value)") }
            }
        }
    }
}
