import Testing
import TokenCacheSodium

@Suite struct SecureBufferTests {
    @Test(arguments: [0, 1, 100, 70_000])
    func newBuffersAreZeroFilled(count: Int) {
        let buffer = SecureBuffer(count: count)
        #expect(buffer.count == count)
        buffer.withUnsafeBytes { bytes in
            #expect(bytes.count == count)
            #expect(bytes.allSatisfy { $0 == 0 })
        }
    }

    @Test func writesAreVisibleToReads() {
        let buffer = SecureBuffer(count: 4)
        buffer.withUnsafeMutableBytes { bytes in bytes.copyBytes(from: [9, 8, 7, 6]) }
        #expect(buffer.withUnsafeBytes { Array($0) } == [9, 8, 7, 6])
    }

    @Test func decryptsInPlaceIntoASecureBuffer() throws {
        let key = try SecureKey(randomCount: 32)
        let nonce = Random.bytes(24)
        let sealed = try seal(Array("token".utf8), ad: [], nonce: nonce, key: key)
        let plaintext = SecureBuffer(count: sealed.count - XChaCha20Poly1305.tagByteCount)
        try plaintext.withUnsafeMutableBytes { output in
            try sealed.withUnsafeBytes { ciphertext in
                try nonce.withUnsafeBytes { nonce in
                    try XChaCha20Poly1305.open(
                        ciphertext, associatedData: UnsafeRawBufferPointer(start: nil, count: 0), nonce: nonce,
                        key: key, into: output)
                }
            }
        }
        #expect(plaintext.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == "token")
    }

    @Test func negativeCountStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            _ = SecureBuffer(count: -1)
        }
    }
}
