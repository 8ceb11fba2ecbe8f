import Testing

@testable import TokenCache
import TokenCacheRecords

/// The one case folding: FORMAT.md §1's `ascii_lower`, byte for byte.
@Suite struct ASCIITests {
    @Test func everyByteFoldsAsTheSpecSays() {
        for value in 0...255 {
            let byte = UInt8(value)
            let expected = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            #expect(ASCII.lowercased(byte) == expected, "byte \(value)")
        }
    }

    @Test func onlyASCIILettersFoldAndLengthsMustMatch() {
        #expect(ASCII.equalIgnoringCase("Login.MicrosoftOnline.COM", "login.microsoftonline.com"))
        #expect(!ASCII.equalIgnoringCase("É", "é"))  // not ASCII: Unicode case mapping is never applied
        #expect(!ASCII.equalIgnoringCase("[", "{"))  // 0x5B and 0x7B differ only in bit 5 but are not letters
        #expect(!ASCII.equalIgnoringCase("abc", "abcd") && !ASCII.equalIgnoringCase("", "a"))
        #expect("TENANT-Ä".asciiLowercased == "tenant-Ä")
    }
}
