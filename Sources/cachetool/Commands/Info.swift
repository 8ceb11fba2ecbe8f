import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool info`: facts about a store, no secrets and no identifiers.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the store's format, size, keys and record counts.",
        discussion: """
            JSON: numbers are numbers. readers_in_use counts the reader slots held now and stale_readers those of \
            processes that are gone (as stats counts them), max_readers the slots there are; readers ("in use/max" \
            as a string) is kept for the scripts that read it.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            let info = try cache.info()
            let layout = try cache.storageLayout()
            let fields: [(String, JSONValue)] = [
                ("directory", .string(info.directory)),
                ("store_id", .string(info.storeID)),
                ("format_read_version", .integer(Int64(info.readVersion))),
                ("format_write_version", .integer(Int64(info.writeVersion))),
                ("key_protection", .string(info.keyProtection)),
                ("data_keys", .integer(Int64(info.dataKeyCount))),
                ("active_data_key", .integer(Int64(info.activeDataKeyID))),
                ("cipher", .string(info.cipher.rawValue)),
                ("data_key_rotation_pending", .bool(info.dataKeyRotationPending)),
                // Whether this build can write the store at all; `info` itself always opens it read-only.
                ("read_only", .bool(!info.formatWritable)),
                ("map_size", .integer(Int64(info.mapSize))),
                ("maximum_map_size", .integer(Int64(info.maximumMapSize))),
                ("used_bytes", .integer(Int64(info.usedBytes))),
                ("readers_in_use", .integer(Int64(layout.readersInUse))),
                ("max_readers", .integer(Int64(layout.maxReaders))),
                ("stale_readers", .integer(Int64(layout.staleReaders))),
                ("readers", .string("\(layout.readersInUse)/\(layout.maxReaders)")),
                ("lmdb_version", .string(info.lmdbVersion)),
                ("libsodium_version", .string(info.sodiumVersion)),
                ("records", .counts(info.recordCounts)),
            ]
            if json {
                print(JSONValue.object(Dictionary(uniqueKeysWithValues: fields)).prettyPrinted())
                return
            }
            print(Self.describe(info, layout: layout))
        }
    }

    /// The human view: sizes in binary units with the share of the map in use, the record counts as a table; lines
    /// wider than `width` break between words, under their 12-column label.
    static func describe(_ info: StoreInfo, layout: StoreStatistics.StorageLayout, width: Int? = TerminalWidth.current()) -> String {
        let grouped = ProgressBar.grouped
        let used = info.mapSize > 0 ? Double(info.usedBytes) / Double(info.mapSize) * 100 : 0
        var lines = [
            "store       \(Terminal.sanitize(info.directory))",
            "store id    \(info.storeID)",
            "format      version \(info.readVersion) (read), \(info.writeVersion) (write); "
                + (info.formatWritable ? "this build reads and writes it" : "newer than this build: read-only"),
            "key         \(info.keyProtection == "key" ? "key file or raw key" : info.keyProtection); \(info.dataKeyCount) data key\(info.dataKeyCount == 1 ? "" : "s"), new records under key \(info.activeDataKeyID), sealed with \(info.cipher)"
                + (info.dataKeyRotationPending ? "; a rotation to it is under way (`cachetool verify` counts the records each key seals)" : ""),
        ]
        // A shared store's server keeps its own files: no map and no reader slots to show, its tables' size instead.
        if info.maximumMapSize == Int.max {
            lines.append("size        \(bytes(info.usedBytes)) on the server (the store's table and index)")
        } else {
            lines.append(
                "size        \(bytes(info.usedBytes)) used of a \(bytes(info.mapSize)) map (\(String(format: used < 10 ? "%.1f" : "%.0f", used))%); the map grows up to \(bytes(info.maximumMapSize))"
            )
            lines.append("readers     " + StoreCountLabels.readers(layout))
        }
        lines.append("libraries   liblmdb \(ComponentVersions.current.lmdb), libsodium \(info.sodiumVersion)")
        lines = lines.flatMap { TextWrap.wrap($0, width: width, indent: 12) } + [""]
        var table = Table(headers: ["records", "count"])
        var total = 0
        for kind in EntityKind.allCases {
            let count = info.recordCounts[kind] ?? 0
            total += count
            table.append([kind.rawValue, grouped(count)])
        }
        table.append(["total", grouped(total)])
        lines.append(table.render())
        return lines.joined(separator: "\n")
    }

    /// A byte count in binary units (KiB, MiB, GiB), one decimal.
    static func bytes(_ count: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count), unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : String(format: "%.1f %@", value, units[unit])
    }
}
