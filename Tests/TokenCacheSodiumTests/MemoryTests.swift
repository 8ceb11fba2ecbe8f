import Testing
import TokenCacheSodium

@Suite struct MemoryTests {
    @Test func constantTimeEqualsComparesBytesAndLengths() {
        let a: [UInt8] = [1, 2, 3, 4]
        a.withUnsafeBytes { a in
            [UInt8]([1, 2, 3, 4]).withUnsafeBytes { #expect(ConstantTime.equals(a, $0)) }
            [UInt8]([1, 2, 3, 5]).withUnsafeBytes { #expect(!ConstantTime.equals(a, $0)) }
            [UInt8]([1, 2, 3]).withUnsafeBytes { #expect(!ConstantTime.equals(a, $0)) }
        }
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect(ConstantTime.equals(empty, empty))
    }

    @Test func zeroWipesTheBuffer() {
        var bytes = [UInt8](repeating: 0xFF, count: 33)
        bytes.withUnsafeMutableBytes { Memory.zero($0) }
        #expect(bytes == [UInt8](repeating: 0, count: 33))
        Memory.zero(UnsafeMutableRawBufferPointer(start: nil, count: 0))
    }
}
