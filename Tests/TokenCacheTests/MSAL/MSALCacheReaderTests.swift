import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

@Suite struct MSALCacheReaderTests {
    private func entries(_ text: String, chunkSize: Int? = nil) throws -> [MSALCacheEntry] {
        var reader = MSALCacheReader(bytes: Array(text.utf8), chunkSize: chunkSize)
        return try reader.readAll()
    }

    private func error(_ bytes: [UInt8], chunkSize: Int? = nil, maximumValueSize: Int = MSALCacheReader.defaultMaximumValueSize) -> MSALImportError? {
        var reader = MSALCacheReader(bytes: bytes, chunkSize: chunkSize, maximumValueSize: maximumValueSize)
        do {
            _ = try reader.readAll()
            return nil
        } catch {
            return error
        }
    }

    private func error(_ text: String) -> MSALImportError? { error(Array(text.utf8)) }

    @Test func yieldsEachEntryWithItsSectionKeyAndValue() throws {
        let found = try entries("""
            {"AccessToken": {"a": {"x": "1"}, "b": {"y": 2}}, "Account": {}, "IdToken": {"c": {}}}
            """)
        #expect(found.map(\.sectionName) == ["AccessToken", "AccessToken", "IdToken"])
        #expect(found.map(\.section) == [.entity(.accessToken), .entity(.accessToken), .entity(.idToken)])
        #expect(found.map(\.key) == ["a", "b", "c"])
        #expect(found[0].value == .object(["x": .string(Array("1".utf8))]))
        #expect(found[1].value == .object(["y": .number("2")]))
        #expect(found[0].offset == 22)
    }

    @Test func sectionNamesMatchIgnoringCase() throws {
        let found = try entries("""
            {"accesstoken": {"a": {}}, "REFRESHTOKEN": {"b": {}}, "idToken": {"c": {}}, "account": {"d": {}}, "appmetadata": {"e": {}}}
            """)
        #expect(found.map(\.section) == [.entity(.accessToken), .entity(.refreshToken), .entity(.idToken), .entity(.account), .entity(.appMetadata)])
        #expect(found.map(\.sectionName) == ["accesstoken", "REFRESHTOKEN", "idToken", "account", "appmetadata"])
    }

    @Test func unknownSectionsAreYieldedWhole() throws {
        let found = try entries(#"{"unknownEntity": {"field1": "1", "list": [1, {"a": null}]}, "Version": 3, "AccessToken": {}}"#)
        #expect(found.count == 2)
        #expect(found[0].section == .unknown)
        #expect(found[0].key == nil)
        #expect(found[0].sectionName == "unknownEntity")
        #expect(found[1].value == .number("3"))
    }

    @Test func escapedNamesAndKeysAreDecoded() throws {
        let found = try entries(#"{"\u0041ccessToken": {"k\"ey\u00e9": {}}}"#)
        #expect(found.first?.section == .entity(.accessToken))
        #expect(found.first?.key == "k\"eyé")
    }

    @Test func aByteOrderMarkIsSkipped() throws {
        let found = try MSALCacheReader(bytes: [0xEF, 0xBB, 0xBF] + Array(#"{"Account": {"k": {}}}"#.utf8), chunkSize: 1).readAllCopy()
        #expect(found.count == 1)
        #expect(error([0xEF, 0xBB] + Array("{}".utf8))?.reason == "invalid byte-order mark")
    }

    @Test func emptyDocumentsAreFine() throws {
        #expect(try entries("{}").isEmpty)
        #expect(try entries(" \n{ \"AccessToken\" : { } }\n ").isEmpty)
    }

    @Test(arguments: MSALFixtures.names)
    func everyChunkSizeGivesTheSameEntries(name: String) throws {
        let bytes = try MSALFixtures.bytes(name)
        var whole = MSALCacheReader(bytes: bytes)
        let expected = try whole.readAll()
        #expect(expected.count > 10)
        for chunkSize in [1, 2, 3, 7, 64, 4096] {
            var reader = MSALCacheReader(bytes: bytes, chunkSize: chunkSize)
            #expect(try reader.readAll() == expected, "chunk size \(chunkSize)")
        }
    }

    /// A generated document of about 8 MB read in 4 KiB chunks: the reader never holds more than one entry
    /// plus a couple of chunks.
    @Test func memoryIsBoundedByTheLargestEntryNotTheDocument() throws {
        let entryCount = 20_000
        let entry = MSALTestSupport.accessToken()
        var produced = 0
        var pending: [UInt8] = Array(#"{"AccessToken": {"#.utf8)
        var finished = false
        var reader = MSALCacheReader(chunkSize: 4096) { maximumCount in
            while pending.count < maximumCount && !finished {
                if produced == entryCount {
                    pending += Array("}, \"Unknown\": [1]}".utf8)
                    finished = true
                } else {
                    pending += Array(((produced == 0 ? "" : ",") + "\"key-\(produced)\": " + entry).utf8)
                    produced += 1
                }
            }
            let chunk = Array(pending.prefix(maximumCount))
            pending.removeFirst(chunk.count)
            return chunk
        }
        var count = 0
        var largestBuffer = 0
        while let item = try reader.next() {
            largestBuffer = max(largestBuffer, reader.bufferedByteCount)
            if item.section == .entity(.accessToken) {
                count += 1
                _ = try MSALEntityMapping.entity(from: item)
            }
        }
        #expect(count == entryCount)
        #expect(largestBuffer <= 3 * 4096 + entry.utf8.count, "held \(largestBuffer) bytes")
        #expect(entryCount * entry.utf8.count > 1000 * largestBuffer)
    }

    @Test func readsFromAFileDescriptorAndAFileHandle() throws {
        let bytes = try MSALFixtures.bytes("go.json")
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("msal-reader-\(UUID().uuidString).json")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var inMemory = MSALCacheReader(bytes: bytes)
        let expected = try inMemory.readAll()

        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var fromHandle = MSALCacheReader(fileHandle: handle, chunkSize: 100)
        #expect(try fromHandle.readAll() == expected)

        let descriptor = open(url.path, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var fromDescriptor = MSALCacheReader(fileDescriptor: descriptor, chunkSize: 333)
        #expect(try fromDescriptor.readAll() == expected)
    }

    @Test func aFailingSourceIsAReadError() {
        struct Broken: Error {}
        var reader = MSALCacheReader(chunkSize: 8) { _ in throw Broken() }
        #expect(throws: MSALImportError(.readFailed, "reading the input failed", offset: 0)) { try reader.next() }
    }

    @Test func syntaxErrorsCarryAnOffsetAndAFixedReason() {
        let cases: [(String, MSALImportError.Code, String, Int)] = [
            ("", .syntax, "unexpected end of input", 0),
            ("[]", .notAnObject, "the document is not a JSON object", 0),
            (#"{"AccessToken": []}"#, .notAnObject, "the section is not a JSON object", 16),
            (#"{"AccessToken": {"k": {}}"#, .syntax, "unexpected end of input", 25),
            (#"{"AccessToken": {"k": {}},}"#, .syntax, "expected a member name", 26),
            (#"{"AccessToken": {"k": {"a": 1,}}}"#, .syntax, "expected a member name", 30),
            (#"{"AccessToken": {"k": {"a" 1}}}"#, .syntax, "expected ':' after a member name", 27),
            (#"{"AccessToken": {"k": {"a": 01}}}"#, .syntax, "expected ',' or '}' in an object", 29),
            (#"{"AccessToken": {"k": {"a": [}}}}"#, .syntax, "mismatched closing bracket", 29),
            (#"{"AccessToken": {"k": {"a": "x", "a": "y"}}}"#, .syntax, "duplicate member name", 33),
            (#"{"AccessToken": {}, "AccessToken": {}}"#, .syntax, "duplicate member name", 35),
            (#"{"x": 1} {}"#, .syntax, "unexpected data after the JSON value", 9),
            (#"{"x": tru}"#, .syntax, "invalid literal", 6),
            (#"{"x": @}"#, .syntax, "unexpected character", 6),
            ("{\"x\": \"a\u{01}\"}", .syntax, "control character in a string", 8),
            (#"{"x": "\ud800"}"#, .syntax, "unpaired surrogate escape", 13),
        ]
        for (text, code, reason, offset) in cases {
            let failure = error(text)
            #expect(failure?.code == code, "\(text)")
            #expect(failure?.reason == reason, "\(text)")
            #expect(failure?.offset == offset, "\(text)")
        }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(error(#"{"AccessToken": {"k": "# + deep + "}}")?.reason == "nesting too deep")
        let fine = String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
        #expect(error(#"{"AccessToken": {"k": {"a": "# + fine + "}}}") == nil)
    }

    @Test func anEntryLargerThanTheLimitIsRefusedWhileStreaming() {
        let big = #"{"AccessToken": {"k": {"secret": ""# + String(repeating: "x", count: 5000) + #""}}}"#
        for chunkSize in [nil, 1, 100] {
            let failure = error(Array(big.utf8), chunkSize: chunkSize, maximumValueSize: 1000)
            #expect(failure?.code == .valueTooLarge)
            #expect(failure?.offset == 22)
            #expect(failure?.key == "k")
        }
        #expect(error(Array(big.utf8), maximumValueSize: 6000) == nil)
    }

    @Test func afterAFailureTheReaderKeepsFailing() throws {
        var reader = MSALCacheReader(bytes: Array(#"{"AccessToken": {"a": {}, "b": x}}"#.utf8))
        #expect(try reader.next()?.key == "a")
        #expect(throws: MSALImportError.self) { try reader.next() }
        #expect(throws: MSALImportError.self) { try reader.next() }
    }

    @Test func syntaxErrorsNeverQuoteTheInput() {
        let canary = "RT-CANARY-0042"
        let inputs = [
            #"{"RefreshToken": {"k": {"secret": "RT-CANARY-0042"#,
            #"{"RefreshToken": {"k": {"secret": "RT-CANARY-0042", "secret": "RT-CANARY-0042"}}}"#,
            #"{"RefreshToken": {"k": {"secret": "RT-CANARY-0042\q"}}}"#,
            #"{"RefreshToken": {"k": {"secret": RT-CANARY-0042}}}"#,
        ]
        for input in inputs {
            let failure = error(input)
            #expect(failure != nil)
            #expect(!(failure?.description.contains(canary) ?? true), "\(failure?.description ?? "")")
        }
    }
}

extension MSALCacheReader {
    /// `readAll` on a copy, for use in expressions.
    func readAllCopy() throws -> [MSALCacheEntry] {
        var copy = self
        return try copy.readAll()
    }
}
