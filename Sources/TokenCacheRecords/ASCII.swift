/// ASCII case folding, the one definition the library uses: FORMAT.md §1's `ascii_lower` (bytes `A`–`Z` to `a`–`z`,
/// every other byte unchanged); and ASCII whitespace, the one definition of it (scope strings split on it, a key's
/// text is trimmed of it).
///
/// Identifiers (hosts, tenants, client ids, home account ids, scopes) compare and canonicalise by it, never by
/// Unicode case mapping, which depends on the locale and the Unicode version and would change storage keys.
@usableFromInline package enum ASCII {
    /// `ascii_lower` of one byte. Branch-free, so that hashing loops (the blind index) stay tight.
    @inlinable @inline(__always)
    package static func lowercased(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }

    /// `ascii_lower` of a string's UTF-8 bytes.
    @inlinable
    package static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map(lowercased), as: UTF8.self)
    }

    /// Whether two byte strings are equal after `ascii_lower`, without building either.
    @inlinable @inline(__always)
    package static func equalIgnoringCase(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs) { $0 == $1 || lowercased($0) == lowercased($1) }
    }

    /// Whether `bytes` equal `folded`, a byte string already in `ascii_lower` form, after `ascii_lower`: half the
    /// folding of ``equalIgnoringCase(_:_:)-(some Collection<UInt8>, some Collection<UInt8>)``, for tables kept folded.
    @inlinable @inline(__always)
    package static func equal(_ bytes: UnsafeRawBufferPointer, toFolded folded: [UInt8]) -> Bool {
        bytes.count == folded.count && folded.withUnsafeBufferPointer { folded in
            for index in 0..<folded.count where lowercased(bytes[index]) != folded[index] { return false }
            return true
        }
    }

    /// Space, tab, line feed, carriage return, vertical tab and form feed: what separates the scopes of a scope string
    /// and what is trimmed from a key's text (a trailing newline from `echo` is common). Bytes, not Unicode: no
    /// other character is whitespace here, whatever the locale.
    @inlinable @inline(__always)
    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
    }

    /// ``equalIgnoringCase(_:_:)-(some Collection<UInt8>, some Collection<UInt8>)`` for strings.
    @inlinable
    package static func equalIgnoringCase(_ lhs: String, _ rhs: String) -> Bool { equalIgnoringCase(lhs.utf8, rhs.utf8) }
}

extension String {
    /// This string after `ascii_lower` (``ASCII``): the canonical form FORMAT.md §4.2 prescribes for identifiers.
    @inlinable
    package var asciiLowercased: String { ASCII.lowercased(self) }
}
