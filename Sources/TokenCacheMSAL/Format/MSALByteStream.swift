internal import TokenCache
internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The bytes of an MSAL serialized cache, pulled from their source one chunk at a time.
///
/// A cache file can be hundreds of megabytes; the importer must not hold it. The stream keeps only the bytes not
/// yet consumed, plus, while a value is being captured (``beginCapture()`` … ``endCapture()``), that value's
/// bytes: so its memory is bounded by the largest captured value plus one chunk, whatever the file's size.
struct MSALByteStream {
    /// Returns the next chunk of at most the requested size; an empty chunk means the end of the input.
    typealias ChunkSource = (_ maximumCount: Int) throws -> [UInt8]

    /// The default read size: 64 KiB.
    static let defaultChunkSize = 64 * 1024

    private var buffer: [UInt8]
    /// Index in `buffer` of the next byte.
    private var position = 0
    /// Absolute input offset of `buffer[0]`.
    private var base = 0
    /// Index in `buffer` where the current capture starts.
    private var captureStart: Int?
    private var atEnd: Bool
    private let source: ChunkSource?
    private let chunkSize: Int
    /// A capture longer than this fails with ``MSALImportError/Code/valueTooLarge``.
    let maximumCaptureSize: Int

    /// A stream over chunks from `source`.
    init(chunkSize: Int = defaultChunkSize, maximumCaptureSize: Int, source: @escaping ChunkSource) {
        precondition(chunkSize > 0, "chunk size must be positive")
        buffer = []
        atEnd = false
        self.source = source
        self.chunkSize = chunkSize
        self.maximumCaptureSize = maximumCaptureSize
    }

    /// A stream over bytes already in memory (nothing is copied).
    init(bytes: [UInt8], maximumCaptureSize: Int) {
        buffer = bytes
        atEnd = true
        source = nil
        chunkSize = MSALByteStream.defaultChunkSize
        self.maximumCaptureSize = maximumCaptureSize
    }

    /// Absolute offset of the next byte in the input.
    var offset: Int { base + position }

    /// The bytes held right now (for tests of the memory bound).
    var bufferedCount: Int { buffer.count }

    /// The next byte without consuming it; nil at the end of the input.
    @inline(__always)
    mutating func peek() throws(MSALImportError) -> UInt8? {
        if position < buffer.count { return buffer[position] }
        return try refillAndPeek()
    }

    /// Consumes and returns the next byte; nil at the end of the input.
    @inline(__always)
    mutating func next() throws(MSALImportError) -> UInt8? {
        if position < buffer.count {
            let byte = buffer[position]
            position += 1
            return byte
        }
        guard let byte = try refillAndPeek() else { return nil }
        position += 1
        return byte
    }

    /// Consumes the byte ``peek()`` returned.
    @inline(__always)
    mutating func skip() { position += 1 }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    mutating func skipWhitespace() throws(MSALImportError) {
        while let byte = try peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    /// Starts keeping every byte consumed from here on.
    mutating func beginCapture() { captureStart = position }

    /// The bytes consumed since ``beginCapture()``, and the input offset of the first one. Ends the capture.
    mutating func endCapture() throws(MSALImportError) -> (bytes: [UInt8], offset: Int) {
        let start = captureStart ?? position
        captureStart = nil
        guard position - start <= maximumCaptureSize else { throw tooLarge(at: base + start) }
        return (Array(buffer[start..<position]), base + start)
    }

    private func tooLarge(at offset: Int) -> MSALImportError {
        MSALImportError(.valueTooLarge, "value is larger than the import limit of \(maximumCaptureSize) bytes", offset: offset)
    }

    private mutating func refillAndPeek() throws(MSALImportError) -> UInt8? {
        while position >= buffer.count {
            guard !atEnd, let source else { return nil }
            let keep = captureStart ?? position
            if let captureStart, position - captureStart > maximumCaptureSize { throw tooLarge(at: base + captureStart) }
            if keep > 0 {
                buffer.removeSubrange(0..<keep)
                base += keep
                position -= keep
                if captureStart != nil { captureStart = 0 }
            }
            let chunk: [UInt8]
            do { chunk = try source(chunkSize) } catch {
                throw MSALImportError(.readFailed, "reading the input failed", offset: offset)
            }
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
        return buffer[position]
    }
}

extension MSALByteStream {
    /// Chunks of `bytes` of `chunkSize` each: an in-memory input read as if from a file (tests use size 1).
    static func chunks(of bytes: [UInt8]) -> ChunkSource {
        var offset = 0
        return { maximumCount in
            let end = min(bytes.count, offset + maximumCount)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    /// Chunks read from `handle` until its end.
    static func chunks(of handle: FileHandle) -> ChunkSource {
        { maximumCount in
            guard let data = try handle.read(upToCount: maximumCount) else { return [] }
            return [UInt8](data)
        }
    }

    /// Chunks read with `read(2)` from an open file descriptor (not closed by the stream), retrying on `EINTR`.
    static func chunks(ofFileDescriptor descriptor: Int32) -> ChunkSource {
        { maximumCount in
            var chunk = [UInt8](repeating: 0, count: maximumCount)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, maximumCount) }
                if count >= 0 {
                    chunk.removeSubrange(count...)
                    return chunk
                }
                if errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
        }
    }
}
