import TokenCacheClient

/// What a failed request answers: a status and a short kind, never the error's message (which may name a store
/// location) nor anything of the user's.
struct ErrorKind: Sendable {
    let status: Int
    let kind: String

    init(_ error: any Error) {
        switch error {
        case let error as TokenCacheError where error.code == .storeUnavailable:
            (status, kind) = (503, "store_unavailable")
        case let error as TokenCacheError:
            (status, kind) = (500, error.code.name)
        case let error as TokenClientError where error.code == .interactionRequired:
            (status, kind) = (401, "interaction_required")
        case let error as TokenClientError:
            (status, kind) = (500, error.code.name)
        case is IdentityProviderUnavailable:
            (status, kind) = (502, "idp_unavailable")
        case is CancellationError:
            (status, kind) = (500, "cancelled")
        default:
            (status, kind) = (500, "internal")
        }
    }
}
