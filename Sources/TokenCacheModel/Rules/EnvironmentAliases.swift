internal import TokenCacheRecords

/// Alias groups of authority hosts. Data, not code: the built-in table plus groups the caller adds.
///
/// Tokens for one user sit under different hosts depending on which SDK wrote them (.NET writes
/// `login.windows.net`, Python and Go write whatever host the app configured), so lookups match the
/// `environment` by alias group, never by string (Docs/Semantics.md, "Environments and alias groups"). Each
/// group has an id, its first host, ASCII-lower-cased; for the built-in groups that is MSAL's "preferred cache"
/// host. Records keep the host their writer gave, and storage keys hold that host, never the group id
/// (FORMAT.md §4.3).
///
/// A host that no group names forms a group of its own: an unknown authority (ADFS, B2C, a test server)
/// still matches itself, case-insensitively, and nothing else.
///
/// Hosts compare ASCII-case-insensitively and otherwise byte for byte: no Unicode normalization, no
/// trimming, no trailing-dot or port handling. Authority hosts are ASCII (IDNs travel as punycode), and
/// `String` equality would merge byte-different strings by canonical equivalence.
///
/// Regional sub-hosts (`westus2.login.microsoft.com`) are *not* folded into their base cloud. Recent msal-go
/// does that in `ResolveKnownCloud`, but it uses it to decide whether two hosts are the same cloud, not for
/// cache matching, and this engine does not need it (Docs/Semantics.md, "Environments and alias groups"). A
/// caller who needs a regional host in a group adds it with ``adding(_:)``.
///
/// Nothing persists the table or its ids: a storage key holds a record's own host, so changing the table moves no
/// record. It changes which records later lookups, intersect-deletes and sign-outs treat as one cloud, so every
/// process sharing a store should configure the same groups.
///
/// For example:
///
/// ```swift
/// let builtIn = EnvironmentAliases.builtIn
/// builtIn.areAliases("Login.MicrosoftOnline.com", "sts.windows.net")  // true
/// builtIn.groupID(of: "login.microsoft.com")                         // "login.windows.net"
///
/// // Extend a group by restating it: `adding` moves hosts, so a partial list would split the group.
/// let aliases = builtIn.adding(builtIn.hosts(aliasing: "login.windows.net") + ["westus2.login.microsoft.com"])
/// aliases.groupID(of: "WESTUS2.login.microsoft.com")                 // "login.windows.net"
/// ```
public struct EnvironmentAliases: Sendable, Hashable {
    /// A host, ASCII-lower-cased, compared by bytes.
    fileprivate struct Host: Hashable, Sendable {
        package let bytes: [UInt8]

        package init(_ text: String) {
            bytes = text.utf8.map(ASCII.lowercased)
        }

        package var text: String { String(decoding: bytes, as: UTF8.self) }

        /// The bytes in one call: the synthesized hash feeds the hasher byte by byte.
        package func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    /// Each known host → the canonical host of its group.
    fileprivate var canonicalByHost: [Host: Host]
    /// Each canonical host → the hosts of its group, canonical first, in the order given.
    ///
    /// Dictionaries keyed by canonical host (rather than arrays of groups) make the synthesized `==` and
    /// `hash(into:)` compare the table by content, independent of how it was built.
    fileprivate var membersByCanonical: [Host: [Host]]

    /// The built-in groups (public cloud, China, US Government, US regional, Germany legacy, PPE, France Bleu,
    /// Germany Delos, Singapore GovSG), each with its preferred-cache host first (Docs/Semantics.md, "Environments
    /// and alias groups").
    ///
    /// The table is msal-go's `knownClouds` (`apps/internal/oauth/ops/authority/known_metadata.go`) plus the
    /// PPE group of msal-dotnet's `KnownMetadataProvider`. The public cloud's canonical id is
    /// `login.windows.net`, MSAL's preferred-cache host, not the preferred-network host.
    public static let builtIn = EnvironmentAliases(groups: [
        // Public cloud.
        ["login.windows.net", "login.microsoftonline.com", "login.microsoft.com", "sts.windows.net"],
        // China (login.chinacloudapi.cn kept for backward compatibility).
        ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
        // US Government.
        ["login.microsoftonline.us", "login.usgovcloudapi.net"],
        // US regional.
        ["login-us.microsoftonline.com"],
        // Germany (legacy).
        ["login.microsoftonline.de"],
        // PPE (msal-dotnet's list only).
        ["login.windows-ppe.net", "sts.windows-ppe.net", "login.microsoft-ppe.com"],
        // France (Bleu).
        ["login.sovcloud-identity.fr"],
        // Germany (Delos).
        ["login.sovcloud-identity.de"],
        // Singapore (GovSG).
        ["login.sovcloud-identity.sg"],
    ])

    /// Groups given as host lists; the first host of each group is its canonical id. Hosts compare
    /// ASCII-case-insensitively.
    ///
    /// Groups are applied in order with the rule of ``adding(_:)``: a host listed in two groups ends up in the
    /// later one. Empty groups and repeated hosts within a group are ignored.
    public init(groups: [[String]]) {
        canonicalByHost = [:]
        membersByCanonical = [:]
        for group in groups { add(group) }
    }

    /// A copy with `group` added; hosts already in another group move to the new group (the caller's word
    /// wins).
    ///
    /// The first host of `group` becomes the new group's canonical id. A group that loses its canonical host
    /// this way is re-identified by its next remaining host, so every group always has one of its own members
    /// as id. Adding an empty group returns the table unchanged.
    public func adding(_ group: [String]) -> EnvironmentAliases {
        var copy = self
        copy.add(group)
        return copy
    }

    /// The id of `host`'s group: the group's first host, ASCII-lower-cased (after ``adding(_:)`` moved hosts, the
    /// first that remains). An unknown host forms its own group, so its id is the host itself, ASCII-lower-cased.
    ///
    /// For display and for a caller's own grouping. The store never persists it and never matches by it: storage
    /// keys hold each record's own host, and matching uses ``areAliases(_:_:)``.
    public func groupID(of host: String) -> String {
        let key = Host(host)
        return (canonicalByHost[key] ?? key).text
    }

    /// Whether `a` and `b` belong to the same group (the same host, ignoring ASCII case, always does).
    ///
    /// Called for every candidate record of a lookup, so it allocates nothing: it compares bytes against the
    /// (small) table instead of building lower-cased keys.
    public func areAliases(_ a: String, _ b: String) -> Bool {
        // The common case, one host spelled the same way (up to ASCII case), needs no table.
        if ASCII.equalIgnoringCase(a.utf8, b.utf8) { return true }
        // `a` unknown: its group is itself, and `b` is another host.
        guard let members = knownMembers(of: a.utf8) else { return false }
        return members.contains { ASCII.equalIgnoringCase(b.utf8, $0.bytes) }
    }

    /// The members of the configured group `host` (any case) belongs to, nil if it belongs to none: a scan of the
    /// (small) table comparing bytes, with no lower-cased key built or hashed.
    fileprivate func knownMembers(of host: some Collection<UInt8>) -> [Host]? {
        membersByCanonical.values.first { members in members.contains { ASCII.equalIgnoringCase(host, $0.bytes) } }
    }

    /// Every host of `host`'s group, canonical first (just `host`, lower-cased, if unknown).
    public func hosts(aliasing host: String) -> [String] {
        group(of: host).members.map(\.text)
    }

    private mutating func add(_ group: [String]) {
        var seen = Set<Host>()
        let hosts = group.map(Host.init).filter { seen.insert($0).inserted }
        guard let canonical = hosts.first else { return }

        // Take the moved hosts out of their old groups, then re-identify what is left of each.
        let previousGroups = Set(hosts.compactMap { canonicalByHost[$0] })
        for previous in previousGroups {
            let remaining = (membersByCanonical.removeValue(forKey: previous) ?? []).filter { !seen.contains($0) }
            guard let successor = remaining.first else { continue }
            membersByCanonical[successor] = remaining
            for member in remaining { canonicalByHost[member] = successor }
        }

        membersByCanonical[canonical] = hosts
        for host in hosts { canonicalByHost[host] = canonical }
    }
}

/// The hosts of one alias group, matched against stored environments as bytes: a lookup judges every candidate
/// without building a string.
package struct AliasGroup: Sendable {
    /// ASCII-lower-cased, canonical first: the table's own array (shared, not copied, so a lookup builds no group).
    fileprivate let members: [EnvironmentAliases.Host]

    /// Whether `host` (any case) is a member: for the group of `h`, exactly `EnvironmentAliases.areAliases(host, h)`.
    package func contains(_ host: UnsafeRawBufferPointer) -> Bool {
        members.contains { ASCII.equal(host, toFolded: $0.bytes) }
    }

    package func contains(_ host: String) -> Bool {
        var host = host
        return host.withUTF8 { contains(UnsafeRawBufferPointer($0)) }
    }
}

extension EnvironmentAliases {
    /// The alias group of `host`: its built-in or configured group, or the host alone when it is unknown.
    ///
    /// Found as ``areAliases(_:_:)`` finds it (``knownMembers(of:)``): every lookup asks this once.
    package func group(of host: String) -> AliasGroup {
        var host = host
        let known = host.withUTF8 { knownMembers(of: UnsafeRawBufferPointer($0)) }
        return AliasGroup(members: known ?? [Host(host)])
    }
}
