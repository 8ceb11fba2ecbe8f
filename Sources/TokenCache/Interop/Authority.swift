internal import TokenCacheRecords

/// An identity-provider authority URL, reduced to what the cache stores: the host (MSAL's `environment`) and
/// the tenant (MSAL's `realm`).
///
/// Accepted: `https://HOST[:PORT]/TENANT[/more/path]`, e.g.
/// `https://login.microsoftonline.com/contoso.onmicrosoft.com/`, `https://login.microsoftonline.com/common/v2.0`,
/// `https://fs.contoso.com/adfs`. As in MSAL Python's `canonicalize`, the host is lower-cased and the port is
/// not part of it; the tenant is the first path segment, case preserved. Rejected (``TokenCacheError`` code
/// `.invalidArgument`): a scheme other than https, user info, a query or fragment, no host, no tenant segment,
/// characters outside printable ASCII (give internationalized hosts in their `xn--` form). Unlike MSAL Python,
/// a CIAM authority without a tenant segment is not completed from the host name: give the tenant explicitly.
public struct Authority: Sendable, Hashable {
    /// The URL as given.
    public let url: String
    /// Lower-cased host, without port.
    public let host: String
    /// The first path segment, as given (case preserved); `adfs` for ADFS.
    public let tenant: String

    /// The tenant segments that do not name a tenant: the real tenant comes from the id_token `tid`.
    static let tenantlessSegments: Set<String> = ["common", "organizations", "consumers"]

    /// - Throws: ``TokenCacheError`` `.invalidArgument` when the URL is not a usable authority.
    public init(_ url: String) throws {
        let bytes = Array(url.utf8)
        func reject(_ reason: String) -> TokenCacheError { TokenCacheError(.invalidArgument, "authority URL \(reason)") }

        guard !bytes.isEmpty else { throw reject("is empty") }
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw reject("contains whitespace, a control character or non-ASCII text")
        }
        let scheme = Array("https://".utf8)
        guard bytes.count > scheme.count, zip(bytes, scheme).allSatisfy({ ASCII.lowercased($0) == $1 }) else {
            throw reject("must use the https scheme")
        }
        if bytes.contains(UInt8(ascii: "?")) { throw reject("must not have a query") }
        if bytes.contains(UInt8(ascii: "#")) { throw reject("must not have a fragment") }

        let rest = bytes[scheme.count...]
        let pathStart = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let hostAndPort = rest[rest.startIndex..<pathStart]
        if hostAndPort.contains(UInt8(ascii: "@")) { throw reject("must not contain user info") }
        if hostAndPort.contains(UInt8(ascii: "[")) { throw reject("host must be a DNS name or IPv4 address") }

        var hostBytes = hostAndPort
        if let colon = hostAndPort.firstIndex(of: UInt8(ascii: ":")) {
            hostBytes = hostAndPort[hostAndPort.startIndex..<colon]
            let port = hostAndPort[(colon + 1)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(String(decoding: port, as: UTF8.self)), (1...65535).contains(number) else {
                throw reject("has an invalid port")
            }
        }
        guard !hostBytes.isEmpty else { throw reject("has no host") }
        guard Self.isValidHost(hostBytes) else { throw reject("host is not a valid DNS name") }

        let path = rest[pathStart...]
        let segments = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        // `segments[0]` is the empty string before the leading "/".
        guard segments.count >= 2, let tenantBytes = segments.dropFirst().first, !tenantBytes.isEmpty else {
            throw reject("has no tenant path segment")
        }
        guard tenantBytes.allSatisfy(Self.isTenantByte) else {
            throw reject("tenant segment contains a character outside A-Z a-z 0-9 . _ ~ -")
        }

        self.url = url
        self.host = String(decoding: hostBytes.map(ASCII.lowercased), as: UTF8.self)
        self.tenant = String(decoding: tenantBytes, as: UTF8.self)
    }

    /// `common`, `organizations` or `consumers` (ASCII case-insensitive): the stored realm comes from the id_token.
    public var isTenantless: Bool { Self.tenantlessSegments.contains(tenant.asciiLowercased) }

    /// An ADFS authority (tenant segment `adfs`, ASCII case-insensitive).
    public var isADFS: Bool { ASCII.equalIgnoringCase(tenant, "adfs") }

    /// Labels of letters, digits, `-` and `_` separated by single dots; no empty label, no trailing dot.
    private static func isValidHost(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count <= 253 else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
    }

    /// RFC 3986 unreserved characters: enough for GUIDs, domain names and the well-known segments.
    private static func isTenantByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
    }
}
