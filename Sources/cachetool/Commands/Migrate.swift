import ArgumentParser
import TokenCache
import TokenCachePostgreSQL

/// `cachetool migrate`: bring a shared store's tables to the version this build uses.
///
/// Its own verb, not a side effect of an open: changing tables that other hosts are using is an operator's decision,
/// made once, under the schema's lock, and a host that meets tables older than its build refuses them, naming this
/// command, rather than change them on its own.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a shared store's tables to this build's version.",
        discussion: """
            Runs every migration from the tables' version to this build's in one transaction, under the \
            schema's advisory lock: all or nothing, and two migrations started at once make one. It needs no key \
            and changes no record. Hosts of the older build keep working on the migrated tables until they are \
            restarted onto this build; hosts of this build refuse older tables until they are migrated. Running it \
            again does nothing. A directory's format upgrades itself when opened: there, nothing is done.

            Exit codes: 0 migrated or already current; 66 no store in the schema; 69 server unavailable; 78 tables \
            newer than this build knows.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try Failure.reporting {
            let configuration = options.configuration(readOnly: false)
            guard let migration = try configuration.migrateSharedStore() else {
                if json {
                    print(JSONValue.object(["kind": .string("directory"), "migrated": .bool(false)]).prettyPrinted())
                } else {
                    print("\(Terminal.sanitize(configuration.directory)) is a directory: its format upgrades itself when opened; nothing to migrate.")
                }
                return
            }
            if json {
                print(
                    JSONValue.object([
                        "kind": .string("postgresql"), "from": .integer(Int64(migration.from)), "to": .integer(Int64(migration.to)),
                        "migrated": .bool(migration.migrated),
                    ]).prettyPrinted()
                )
            } else if migration.migrated {
                print("Migrated the tables of \(Terminal.sanitize(configuration.directory)) from version \(migration.from) to \(migration.to).")
            } else {
                print("The tables of \(Terminal.sanitize(configuration.directory)) are at version \(migration.to) already; nothing to do.")
            }
        }
    }
}
