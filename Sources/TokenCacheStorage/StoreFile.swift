/// One file of a store, as its kind of backend names it: for the library's rule that a store is its user's alone
/// (every file that exists is checked before a store is opened), for telling whether a place holds a store, and for
/// what an operator is shown. A kind of backend without files (memory, a database server) has none.
package struct StoreFile: Sendable, Hashable {
    /// What the file is to the store: the library asks by role, never by name, so that no name of a kind's files is
    /// spelled above the storage module.
    package enum Role: Sendable, Hashable {
        /// The records themselves: while it exists there is a store, and its size is the store's at rest.
        case records
        /// State the processes that have the store open share (LMDB's lock table): recreated by the next opener.
        case sharedState
        /// A lock file that holds nothing but a lock (and at most its holder's pid).
        case lock
    }

    /// The file's path.
    package let path: String
    /// Its name in its directory, for messages.
    package let name: String
    package let role: Role

    package init(directory: String, name: String, role: Role) {
        path = directory + "/" + name
        self.name = name
        self.role = role
    }
}
