/// A store in this process's memory (``InMemoryRecordBackend``): the location `:memory:` names. Every creation makes a
/// new, empty store, reachable only through the handle that created it, so an open finds none and no location holds one.
///
/// It adopts no maintenance capability: there is no file to copy, compact or move aside, and a store in memory ends
/// with its last reference anyway. An operation that needs one is refused, naming it.
package struct InMemoryStorageLocation: StorageLocation {
    package let location: String

    package init(name: String) {
        location = name
    }

    package var kind: String { "in-memory" }
    package var directory: String? { nil }
    package var files: [StoreFile] { [] }
    package func holdsStore() -> Bool { false }
    package func sizeAtRest() -> Int? { nil }
    package func relocated(to location: String) -> any StorageLocation { InMemoryStorageLocation(name: location) }

    package func open(readOnly: Bool, create: Bool) throws(StorageError) -> any RecordBackend {
        guard create else { throw StorageError(.storeNotFound, "an in-memory store exists only as the TokenStore that created it") }
        return InMemoryRecordBackend(name: location)
    }
}
