internal import TokenCache
internal import Foundation

/// A streaming reader of an MSAL serialized cache (the unified JSON that MSAL Python, .NET, Go, JS and ObjC write).
///
/// The document is `{ "<section>": { "<key>": { …entry… }, … }, … }`. The reader tokenizes the top-level object
/// and each section object itself, byte by byte as chunks arrive, and parses only one entry's value at a time
/// with ``ResponseJSON`` (strict RFC 8259, duplicate member names rejected, depth bounded). So memory is bounded
/// by the largest single entry (at most ``maximumValueSize``) plus one chunk, not by the file: a 300 MB cache
/// streams through.
///
/// Rules:
/// - a leading UTF-8 byte-order mark is skipped (MSAL .NET's files start with one);
/// - entity section names match ASCII-case-insensitively (``MSALSection``); an entity section must be an object;
/// - every other top-level member is yielded whole as an unknown section, to be kept and written back;
/// - two top-level members with exactly the same name are rejected (as a duplicate member anywhere else is);
///   two entries with the same key in a section are both yielded: identity comes from the fields, and the
///   importer, which remembers the keys (``MSALDuplicateKeys``), decides what a repeated key means;
/// - nothing may follow the document but whitespace.
///
/// Every failure is an ``MSALImportError`` with a byte offset and a fixed reason, never input bytes. After a
/// failure the reader keeps throwing the same error.
struct MSALCacheReader {
    /// The default limit for one entry (or one unknown section): 4 MiB. Real entries are a few kilobytes; an SSH
    /// certificate token is the largest at some tens.
    static let defaultMaximumValueSize = 4 * 1024 * 1024

    private var stream: MSALByteStream
    private var state = State.start
    private var sectionNames: Set<String> = []

    private enum State {
        case start
        case topMember(first: Bool)
        case sectionEntry(name: String, kind: EntityKind, first: Bool)
        case end
        case finished
        case failed(MSALImportError)
    }

    /// A reader over bytes in memory, consumed in `chunkSize` steps when given (to read exactly as from a file).
    init(bytes: [UInt8], chunkSize: Int? = nil, maximumValueSize: Int = defaultMaximumValueSize) {
        if let chunkSize {
            stream = MSALByteStream(chunkSize: chunkSize, maximumCaptureSize: maximumValueSize, source: MSALByteStream.chunks(of: bytes))
        } else {
            stream = MSALByteStream(bytes: bytes, maximumCaptureSize: maximumValueSize)
        }
    }

    /// A reader of `handle` from its current position to its end, `chunkSize` bytes per read.
    init(fileHandle: FileHandle, chunkSize: Int = MSALByteStream.defaultChunkSize, maximumValueSize: Int = defaultMaximumValueSize) {
        stream = MSALByteStream(chunkSize: chunkSize, maximumCaptureSize: maximumValueSize, source: MSALByteStream.chunks(of: fileHandle))
    }

    /// A reader of an open file descriptor (left open), `chunkSize` bytes per `read(2)`.
    init(fileDescriptor: Int32, chunkSize: Int = MSALByteStream.defaultChunkSize, maximumValueSize: Int = defaultMaximumValueSize) {
        stream = MSALByteStream(
            chunkSize: chunkSize, maximumCaptureSize: maximumValueSize, source: MSALByteStream.chunks(ofFileDescriptor: fileDescriptor))
    }

    /// A reader of chunks from any source (an empty chunk ends the input).
    init(chunkSize: Int = MSALByteStream.defaultChunkSize, maximumValueSize: Int = defaultMaximumValueSize, source: @escaping MSALByteStream.ChunkSource) {
        stream = MSALByteStream(chunkSize: chunkSize, maximumCaptureSize: maximumValueSize, source: source)
    }

    /// Bytes the reader holds right now: the memory bound's witness in tests.
    var bufferedByteCount: Int { stream.bufferedCount }

    /// The next entry, or nil after the end of a well-formed document.
    mutating func next() throws(MSALImportError) -> MSALCacheEntry? {
        if case .failed(let error) = state { throw error }
        do {
            return try advance()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Every entry, for inputs known to be small (tests, tools); importers iterate ``next()``.
    mutating func readAll() throws(MSALImportError) -> [MSALCacheEntry] {
        var entries: [MSALCacheEntry] = []
        while let entry = try next() { entries.append(entry) }
        return entries
    }

    private mutating func advance() throws(MSALImportError) -> MSALCacheEntry? {
        while true {
            switch state {
            case .start:
                try skipByteOrderMark()
                try stream.skipWhitespace()
                guard let byte = try stream.peek() else { throw syntax("unexpected end of input") }
                guard byte == UInt8(ascii: "{") else { throw MSALImportError(.notAnObject, "the document is not a JSON object", offset: stream.offset) }
                stream.skip()
                state = .topMember(first: true)

            case .topMember(let first):
                guard try memberFollows(first: first) else {
                    state = .end
                    continue
                }
                let name = try memberName()
                guard sectionNames.insert(name).inserted else {
                    throw syntax("duplicate member name", at: stream.offset)
                }
                let section = MSALSection(name: name)
                guard case .entity(let kind) = section else {
                    let (value, offset) = try capturedValue(section: name, key: nil)
                    state = .topMember(first: false)
                    return MSALCacheEntry(sectionName: name, section: .unknown, key: nil, value: value, offset: offset)
                }
                guard try stream.peek() == UInt8(ascii: "{") else {
                    if try stream.peek() == nil { throw syntax("unexpected end of input") }
                    throw MSALImportError(.notAnObject, "the section is not a JSON object", offset: stream.offset, section: name)
                }
                stream.skip()
                state = .sectionEntry(name: name, kind: kind, first: true)

            case .sectionEntry(let name, let kind, let first):
                guard try memberFollows(first: first, section: name) else {
                    state = .topMember(first: false)
                    continue
                }
                let key = try memberName(section: name)
                let (value, offset) = try capturedValue(section: name, key: key)
                state = .sectionEntry(name: name, kind: kind, first: false)
                return MSALCacheEntry(sectionName: name, section: .entity(kind), key: key, value: value, offset: offset)

            case .end:
                try stream.skipWhitespace()
                if try stream.peek() != nil { throw syntax("unexpected data after the JSON value") }
                state = .finished
                return nil

            case .finished:
                return nil

            case .failed(let error):
                throw error
            }
        }
    }

    private func syntax(_ reason: String, at offset: Int? = nil, section: String? = nil, key: String? = nil) -> MSALImportError {
        MSALImportError(.syntax, reason, offset: offset ?? stream.offset, section: section, key: key)
    }

    private mutating func skipByteOrderMark() throws(MSALImportError) {
        guard try stream.peek() == 0xEF else { return }
        stream.skip()
        guard try stream.next() == 0xBB, try stream.next() == 0xBF else { throw syntax("invalid byte-order mark") }
    }

    /// In an object, after `{` (first) or after a member: whether another member follows (its `,` consumed), or
    /// the object ends (its `}` consumed).
    private mutating func memberFollows(first: Bool, section: String? = nil) throws(MSALImportError) -> Bool {
        try stream.skipWhitespace()
        guard let byte = try stream.peek() else { throw syntax("unexpected end of input", section: section) }
        if byte == UInt8(ascii: "}") {
            stream.skip()
            return false
        }
        if first { return true }
        guard byte == UInt8(ascii: ",") else { throw syntax("expected ',' or '}' in an object", section: section) }
        stream.skip()
        return true
    }

    /// A member name and its `:`, leaving the stream at the value.
    private mutating func memberName(section: String? = nil) throws(MSALImportError) -> String {
        try stream.skipWhitespace()
        guard try stream.peek() == UInt8(ascii: "\"") else { throw syntax("expected a member name", section: section) }
        stream.beginCapture()
        try scanString(section: section)
        let (bytes, offset) = try stream.endCapture()
        let name = try parse(bytes, offset: offset, section: section, key: nil)
        guard case .string(let utf8) = name else { throw syntax("expected a member name", at: offset, section: section) }
        try stream.skipWhitespace()
        guard try stream.next() == UInt8(ascii: ":") else {
            throw syntax("expected ':' after a member name", at: stream.offset - 1, section: section)
        }
        try stream.skipWhitespace()
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Captures the JSON value at the stream's position and parses it.
    private mutating func capturedValue(section: String, key: String?) throws(MSALImportError) -> (ResponseJSON, Int) {
        stream.beginCapture()
        do {
            try scanValue(section: section, key: key)
            let (bytes, offset) = try stream.endCapture()
            return (try parse(bytes, offset: offset, section: section, key: key), offset)
        } catch {
            throw error.located(section: section, key: key)
        }
    }

    private func parse(_ bytes: [UInt8], offset: Int, section: String?, key: String?) throws(MSALImportError) -> ResponseJSON {
        do {
            return try ResponseJSON.parse(bytes)
        } catch {
            throw syntax(error.reason, at: offset + error.offset, section: section, key: key)
        }
    }

    /// Consumes one JSON value's bytes, finding where it ends: strings and nesting are followed; everything
    /// else is left to ``ResponseJSON/parse(_:)``, which sees exactly these bytes.
    private mutating func scanValue(section: String, key: String?) throws(MSALImportError) {
        guard let first = try stream.peek() else { throw syntax("unexpected end of input") }
        switch first {
        case UInt8(ascii: "\""):
            try scanString(section: section)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var closers: [UInt8] = []
            repeat {
                guard let byte = try stream.peek() else { throw syntax("unexpected end of input") }
                switch byte {
                case UInt8(ascii: "\""):
                    try scanString(section: section)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard closers.count < ResponseJSON.maximumDepth else { throw syntax("nesting too deep") }
                    closers.append(byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]"))
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard closers.last == byte else { throw syntax("mismatched closing bracket") }
                    closers.removeLast()
                default:
                    break
                }
                stream.skip()
            } while !closers.isEmpty
        case UInt8(ascii: "-"), 0x30...0x39, UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            // A number or literal: its characters up to the next delimiter.
            while let byte = try stream.peek(), Self.isScalarByte(byte) { stream.skip() }
        default:
            throw syntax("unexpected character")
        }
    }

    private static func isScalarByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// Consumes a string token, from its opening quote to its closing one. Escapes are skipped, not checked.
    private mutating func scanString(section: String?) throws(MSALImportError) {
        stream.skip()  // opening quote
        while true {
            guard let byte = try stream.next() else { throw syntax("unterminated string", section: section) }
            if byte == UInt8(ascii: "\"") { return }
            if byte == UInt8(ascii: "\\") {
                guard try stream.next() != nil else { throw syntax("unterminated string", section: section) }
            }
        }
    }
}
