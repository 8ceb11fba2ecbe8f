package import TokenCacheSodium

/// Keyed hashing of identifiers into storage keys (FORMAT.md §4), so that no home account id, client id,
/// realm, environment or scope is readable in any file.
///
/// `H(label, f1, …, fn) = BLAKE2b-128(key = index_key, enc(label, f1, …, fn))` with
/// `enc(x1, …) = u32be(len x1) ‖ x1 ‖ …`. The length prefixes make `("a", "bc")` and `("ab", "c")` distinct,
/// which MSAL's `-`-joined keys are not.
package struct BlindIndex: Sendable {
    package let key: SecureKey
    /// Keyed BLAKE2b-128 under `key`, from a saved post-key-block state (one compression per digest, not two).
    @usableFromInline let hasher: KeyedHasher

    package init(key: SecureKey) throws(SodiumError) {
        self.key = key
        hasher = try KeyedHasher(key: key, outputCount: FormatConstants.indexDigestCount)
    }

    /// `D(label, ascii_lower(f1), …, ascii_lower(fn) [, exact])`: identifiers are lower-cased while they are
    /// copied into the hash input (no intermediate strings); `exact` (a key id) is taken as it is. Inlined, like the
    /// function below, so that the variadic field array can live on the caller's stack.
    @inlinable @inline(__always)
    package func digest(_ label: StaticString, _ fields: String..., exact: String? = nil) -> [UInt8] {
        digest(label, fields, exact: exact, after: [])
    }

    /// `prefix ‖ D(label, …)` in one allocation: how a storage key grows from its account prefix.
    @inlinable @inline(__always)
    package func digest(_ label: StaticString, _ fields: String..., exact: String? = nil, after prefix: [UInt8]) -> [UInt8] {
        digest(label, fields, exact: exact, after: prefix)
    }

    // Inlinable and inlined into the callers (in other modules too): it lets the variadic callers' field arrays live
    // on the stack instead of the heap.
    @inlinable @inline(__always)
    func digest(_ label: StaticString, _ fields: [String], exact: String?, after prefix: [UInt8]) -> [UInt8] {
        var total = 4 + label.utf8CodeUnitCount + (exact.map { 4 + $0.utf8.count } ?? 0)
        for field in fields { total += 4 + field.utf8.count }
        return withUnsafeTemporaryAllocation(byteCount: total, alignment: 8) { buffer in
            /// Writes `lp(bytes)` at `cursor`, ASCII-lower-cased when asked, and returns where the next one goes.
            /// (A returned position, not a captured `var`: no dynamic exclusivity check per field.)
            func append(_ bytes: UnsafeRawBufferPointer, at cursor: UnsafeMutableRawPointer, lowercased: Bool) -> UnsafeMutableRawPointer {
                cursor.storeBytes(of: UInt32(bytes.count).bigEndian, as: UInt32.self)
                let start = cursor + 4
                if lowercased {
                    // Raw stores: the temporary buffer is raw memory, never bound to a type.
                    for index in 0..<bytes.count {
                        start.storeBytes(of: ASCII.lowercased(bytes[index]), toByteOffset: index, as: UInt8.self)
                    }
                } else if let base = bytes.baseAddress, !bytes.isEmpty {
                    start.copyMemory(from: base, byteCount: bytes.count)
                }
                return start + bytes.count
            }
            var cursor = append(label.utf8, at: buffer.baseAddress!, lowercased: false)
            for var field in fields { cursor = field.withUTF8 { append(UnsafeRawBufferPointer($0), at: cursor, lowercased: true) } }
            if var exact { cursor = exact.withUTF8 { append(UnsafeRawBufferPointer($0), at: cursor, lowercased: false) } }
            assert(cursor == buffer.baseAddress! + total)
            let count = FormatConstants.indexDigestCount
            // `repeating:` rather than `unsafeUninitializedCapacity:`, whose unspecialized path looks up the array's
            // generic metadata on every call (measured: a fifth of this function's own time).
            var result = [UInt8](repeating: 0, count: prefix.count + count)
            result.withUnsafeMutableBytes { output in
                prefix.withUnsafeBytes { if !$0.isEmpty { output.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                // SAFETY of try!: the hasher was built for this key (32 bytes) and output size (16 bytes), the only
                // conditions under which it fails. A silent fallback would collapse every key into one.
                try! hasher.hash(UnsafeRawBufferPointer(buffer), into: UnsafeMutableRawBufferPointer(rebasing: output[prefix.count...]))
            }
            return result
        }
    }

    /// The 16-byte prefix shared by every per-account record of one home account.
    @inlinable
    package func accountPrefix(_ homeAccountID: String) -> [UInt8] {
        digest("account", homeAccountID)
    }
}

/// Canonical token type: ASCII lower case, with an absent or empty type meaning `bearer`.
package func canonicalTokenType(_ tokenType: String?) -> String {
    guard let tokenType, !tokenType.isEmpty else { return "bearer" }
    return tokenType.asciiLowercased
}
