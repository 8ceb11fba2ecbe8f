import Testing
import TokenCacheSodium

@Suite struct RandomTests {
    @Test func tenThousandNoncesAreDistinct() {
        var seen = Set<[UInt8]>()
        for _ in 0..<10_000 {
            let nonce = Random.bytes(XChaCha20Poly1305.nonceByteCount)
            #expect(nonce.count == 24)
            seen.insert(nonce)
        }
        #expect(seen.count == 10_000)
    }

    @Test func fillOverwritesTheWholeBuffer() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        buffer.withUnsafeMutableBytes { Random.fill($0) }
        // 4096 random bytes contain all-zero 64-byte runs with negligible probability.
        for start in stride(from: 0, to: 4096, by: 64) {
            #expect(buffer[start..<start + 64].contains { $0 != 0 })
        }
    }

    @Test func emptyRequestsAreFine() {
        #expect(Random.bytes(0).isEmpty)
        Random.fill(UnsafeMutableRawBufferPointer(start: nil, count: 0))
    }
}
