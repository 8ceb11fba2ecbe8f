#if canImport(Glibc)
import Glibc
#endif
import Testing
import TokenCacheSodium

@Suite struct SecureKeyTests {
    /// 32 recognizable ASCII bytes, so both their text and their hex would stand out in any rendering.
    static let canary = Array("CANARY-KEY-BYTES-0123456789-ABCD".utf8)

    @Test func renderingsNeverContainTheKeyBytes() throws {
        let key = try makeKey(Self.canary)
        var dumped = ""
        dump(key, to: &dumped)
        var dumpedInContainer = ""
        dump(["key": key], to: &dumpedInContainer)
        let renderings = [
            "\(key)", String(describing: key), String(reflecting: key), key.description, key.debugDescription,
            dumped, dumpedInContainer, String(describing: [key]), String(describing: Optional(key)),
        ] + Mirror(reflecting: key).children.map { "\($0.label ?? ""): \($0.value)" }

        let hex = Hex.encode(Self.canary)
        let hexUpper = hex.uppercased()
        let text = String(decoding: Self.canary, as: UTF8.self)
        let decimal = Self.canary.map(String.init).joined(separator: ", ")
        let base64 = Self.canary.withUnsafeBytes { Base64.encode($0, variant: .original) }
        for rendering in renderings {
            #expect(rendering.contains("<redacted>") || rendering.hasPrefix("count:"))
            for secret in [hex, hexUpper, text, "CANARY", decimal, base64, String(hex.prefix(16))] {
                #expect(!rendering.contains(secret), "rendering leaks key bytes: \(rendering)")
            }
        }
        #expect("\(key)" == "SecureKey(<redacted>, 32 bytes)")
        #expect(String(reflecting: key) == "SecureKey(<redacted>, 32 bytes)")
        #expect(Mirror(reflecting: key).children.map(\.label) == ["count"])
    }

    @Test func copyingKeepsTheBytes() throws {
        let key = try makeKey(Self.canary)
        #expect(key.count == 32)
        #expect(keyBytes(key) == Self.canary)
    }

    @Test func randomKeysDiffer() throws {
        let a = try SecureKey(randomCount: 32)
        let b = try SecureKey(randomCount: 32)
        #expect(a.count == 32)
        #expect(!a.constantTimeEquals(b))
        #expect(a.constantTimeEquals(a))
    }

    @Test func constantTimeEqualsComparesContentAndLength() throws {
        let a = try makeKey(Self.canary)
        let b = try makeKey(Self.canary)
        var flipped = Self.canary
        flipped[0] ^= 1
        #expect(a.constantTimeEquals(b))
        #expect(!a.constantTimeEquals(try makeKey(flipped)))
        #expect(!a.constantTimeEquals(try makeKey(Array(Self.canary.prefix(31)))))
    }

    @Test func inPlaceInitializerSeesZeroedMemoryAndKeepsItsWrites() throws {
        let key = try SecureKey(count: 8) { buffer in
            #expect(buffer.count == 8)
            #expect(buffer.allSatisfy { $0 == 0 })
            for index in buffer.indices { buffer[index] = UInt8(index + 1) }
        }
        #expect(keyBytes(key) == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    struct InitializerFailure: Error, Equatable {}

    @Test func inPlaceInitializerErrorsPropagate() {
        #expect(throws: InitializerFailure()) {
            try SecureKey(count: 32) { _ in throw InitializerFailure() }
        }
    }

    @Test func emptyKeysAreInvalidLength() {
        let copied = #expect(throws: SodiumError.self) {
            try SecureKey(copying: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(copied?.code == .invalidLength)
        let random = #expect(throws: SodiumError.self) { try SecureKey(randomCount: 0) }
        #expect(random?.code == .invalidLength)
        let negative = #expect(throws: SodiumError.self) { try SecureKey(randomCount: -1) }
        #expect(negative?.code == .invalidLength)
        let filled = #expect(throws: SodiumError.self) { try SecureKey(count: 0) { _ in } }
        #expect(filled?.code == .invalidLength)
    }

    @Test func keyMemoryIsReadOnlyAfterInit() async {
        // The write faults with SIGSEGV; a key that could not be created would throw, which ends an exit test with
        // the runtime trap instead.
        await #expect(processExitsWith: .signal(SIGSEGV)) {
            let key = try SecureKey(randomCount: 32)
            key.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(mutating: bytes.baseAddress!).storeBytes(of: 0, as: UInt8.self)
            }
        }
    }
}
