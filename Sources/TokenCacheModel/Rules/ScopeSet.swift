internal import TokenCacheRecords

/// A normalized set of OAuth scopes.
///
/// Scopes are compared the way MSAL .NET, Go and ObjC compare them: order-insensitive, duplicates and
/// extra whitespace ignored, ASCII case-insensitive. Scope tokens are restricted to the RFC 6749 §3.3
/// alphabet (`%x21 / %x23-5B / %x5D-7E`); anything else is rejected. So every accepted scope is ASCII, where
/// `String` order and equality are exactly byte order and equality (no Unicode canonical equivalence applies).
public struct ScopeSet: Sendable, Hashable, CustomStringConvertible {
    /// The scopes, ASCII-lower-cased, de-duplicated and sorted bytewise.
    public let normalized: [String]

    /// Parses a space-separated scope string (any ASCII whitespace separates).
    /// - Throws: ``TokenCacheError`` `.invalidArgument` naming the offending byte position if a character is
    ///   outside the RFC 6749 scope-token alphabet.
    public init(parsing text: String) throws {
        try self.init(tokens: CollectionOfOne(text))
    }

    /// Builds a set from individual scopes (each may itself contain whitespace-separated scopes).
    public init(_ scopes: some Sequence<String>) throws {
        try self.init(tokens: scopes)
    }

    private init(tokens: some Sequence<String>) throws {
        // An array sorted and de-duplicated afterwards: requests hold a handful of scopes, where hashing byte arrays
        // into a Set costs more than it saves. Each scope is lower-cased straight from the text's bytes into its
        // string. Accepted scopes are ASCII, where String order and equality are byte order and equality (no
        // Unicode normalization applies), so the standard comparisons below are the bytewise ones.
        var scopes: [String] = []
        for var text in tokens {
            try text.withUTF8 { bytes in
                var start = 0
                for offset in 0...bytes.count {
                    if offset < bytes.count {
                        let byte = bytes[offset]
                        if Self.isScopeByte(byte) { continue }
                        guard Self.isWhitespace(byte) else {
                            throw TokenCacheError(
                                .invalidArgument,
                                "scope contains byte 0x\(String(byte, radix: 16)) at offset \(offset), outside the RFC 6749 scope alphabet"
                            )
                        }
                    }
                    if offset > start {
                        let token = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                        scopes.append(
                            String(unsafeUninitializedCapacity: token.count) { output in
                                for index in token.indices { output[index] = ASCII.lowercased(token[index]) }
                                return token.count
                            })
                    }
                    start = offset + 1
                }
            }
        }
        if scopes.count > 1 {
            scopes.sort(by: <)
            var unique: [String] = []
            unique.reserveCapacity(scopes.count)
            for scope in scopes where unique.last != scope { unique.append(scope) }
            scopes = unique
        }
        normalized = scopes
    }

    /// The canonical form: normalized scopes joined by single spaces. Used in blind-index keys.
    public var canonical: String { normalized.joined(separator: " ") }
    /// The ``canonical`` form.
    public var description: String { canonical }
    /// Whether the set holds no scope.
    public var isEmpty: Bool { normalized.isEmpty }
    /// The number of distinct scopes.
    public var count: Int { normalized.count }

    /// Whether every scope of `other` is in this set.
    public func isSuperset(of other: ScopeSet) -> Bool {
        // Both arrays are sorted: a linear merge, no hashing.
        var index = normalized.startIndex
        for scope in other.normalized {
            while index < normalized.endIndex && normalized[index].utf8.lexicographicallyPrecedes(scope.utf8) {
                index += 1
            }
            guard index < normalized.endIndex, normalized[index] == scope else { return false }
            index += 1
        }
        return true
    }

    /// Whether the two sets share at least one scope.
    public func intersects(_ other: ScopeSet) -> Bool {
        var lhs = normalized.startIndex
        var rhs = other.normalized.startIndex
        while lhs < normalized.endIndex && rhs < other.normalized.endIndex {
            let left = normalized[lhs], right = other.normalized[rhs]
            if left == right { return true }
            if left.utf8.lexicographicallyPrecedes(right.utf8) { lhs += 1 } else { rhs += 1 }
        }
        return false
    }

    /// The set without the given (already normalized) scopes.
    public func subtracting(_ scopes: Set<String>) -> ScopeSet {
        ScopeSet(normalized: normalized.filter { !scopes.contains($0) })
    }

    private init(normalized: [String]) { self.normalized = normalized }

    /// What separates scopes: the record module's ASCII whitespace, the one definition of it in the library.
    package static func isWhitespace(_ byte: UInt8) -> Bool { ASCII.isWhitespace(byte) }

    package static func isScopeByte(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte)
    }
}

extension ScopeSet {
    /// Whether every scope of this set appears in `target`, a scope string as a server sent it (any case, order
    /// and spacing): the same answer as `ScopeSet(parsing: target).isSuperset(of: self)` for a valid target, without
    /// building the set.
    package func isCovered(byTarget target: String) -> Bool {
        var target = target
        return target.withUTF8 { isCovered(byTarget: UnsafeRawBufferPointer($0)) }
    }

    /// ``isCovered(byTarget:)`` over the target's bytes (a token's body field, or a summary's canonical target).
    package func isCovered(byTarget target: UnsafeRawBufferPointer) -> Bool {
        normalized.allSatisfy { scope in
            var scope = scope
            return scope.withUTF8 { wanted in
                var tokenStart = 0
                for index in 0...target.count {
                    guard index == target.count || Self.isWhitespace(target[index]) else { continue }
                    if index - tokenStart == wanted.count,
                        wanted.indices.allSatisfy({ ASCII.lowercased(target[tokenStart + $0]) == wanted[$0] })
                    {
                        return true
                    }
                    tokenStart = index + 1
                }
                return false
            }
        }
    }
}
