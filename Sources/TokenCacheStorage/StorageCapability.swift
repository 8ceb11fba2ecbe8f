/// A piece of maintenance that some kinds of backend offer and others cannot: each is a protocol of its own, which a
/// kind adopts only when it can do the work, so the compiler holds every kind to what it claims. This names them for
/// the error that refuses an operation on a kind that lacks one: a clear `.unsupportedEnvironment` before anything
/// changes, never a crash and never a silent no-op.
package enum StorageCapability: String, Sendable, CaseIterable {
    /// ``SnapshotCopyingBackend``: a consistent copy of an open store while others write (backup).
    case snapshotCopy = "snapshot copy"
    /// ``CompactingStorage``: rewriting a closed store without its free space, in place (compact).
    case compaction
    /// ``QuarantiningStorage``: moving a closed, damaged store aside whole (quarantine).
    case quarantine

    /// What the capability does, for the refusal's message.
    package var purpose: String {
        switch self {
        case .snapshotCopy: "a consistent copy of the store while it is in use"
        case .compaction: "rewriting the store without its free space"
        case .quarantine: "moving the store aside whole"
        }
    }
}

extension StorageError {
    /// The refusal of an operation that needs `capability` on a store whose kind lacks it. Names the capability, the
    /// kind and the place; nothing was done.
    package static func unsupported(_ capability: StorageCapability, kind: String, location: String) -> StorageError {
        StorageError(
            .unsupportedEnvironment,
            "the \(kind) store at \(location) does not support \(capability.rawValue) (\(capability.purpose)); nothing was done"
        )
    }
}
