import Foundation
import Testing

/// The storage seam lends keys and values as `RawSpan`s, which the compiler keeps inside the callback that received
/// them. One reader may keep a view longer, through one helper, in one file: the silent lookup's bucket read
/// (Docs/Architecture.md, "How long a view lives"). These tests hold that: the helper is used nowhere else, and no
/// code elsewhere takes a span's pointer out of its `withUnsafeBytes` (the way around the compiler's rule).
@Suite struct SpanEscapeTests {
    /// The one audited escape, and the one file that may use it.
    static let helper = "unsafeBytesValidForTheTransaction"
    static let allowedFile = "TokenCache/Flows/SilentLookupFetch.swift"

    /// Ways of handing a buffer's pointer out of `withUnsafeBytes`: `{ $0 }`, `{ bytes in bytes }`, `(\.self)`, with or
    /// without parentheses, over any line breaks.
    static let escapePatterns = [
        #"withUnsafeBytes\s*(\(\s*)?\{\s*\$0\s*\}"#,
        #"withUnsafeBytes\s*(\(\s*)?\{\s*([A-Za-z_][A-Za-z0-9_]*)\s+in\s+\2\s*\}"#,
        #"withUnsafeBytes\s*\(\s*\\\s*\.self\s*\)"#,
        #"withUnsafeBytes\s*\(\s*\\[A-Za-z_][A-Za-z0-9_.]*\s*\.self\s*\)"#,
    ].map { try! NSRegularExpression(pattern: $0) }

    struct Escape: Hashable, CustomStringConvertible {
        let path: String
        let line: Int
        let what: String
        var description: String { "\(path):\(line): \(what)" }
    }

    /// Every use of the helper outside its file, every escape pattern outside the helper's declaration, and a
    /// declaration of the helper that is not `fileprivate` (or `private`), in `files` (path relative to `Sources/`,
    /// code with comments and literals blanked).
    static func escapes(in files: [SwiftSource]) -> [Escape] {
        var found: [Escape] = []
        for file in files {
            let code = file.lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
            let whole = NSRange(code.startIndex..., in: code)
            func line(of range: NSRange) -> Int {
                code.utf16.prefix(range.location).reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            }
            let helperUses = try! NSRegularExpression(pattern: "\\b\(helper)\\b").matches(in: code, range: whole)
            let declarations = try! NSRegularExpression(pattern: "\\bvar\\s+\(helper)\\b").matches(in: code, range: whole)
            let confined = try! NSRegularExpression(pattern: "\\b(fileprivate|private)\\s+var\\s+\(helper)\\b").matches(in: code, range: whole)
            if file.path != allowedFile {
                for use in helperUses { found.append(Escape(path: file.path, line: line(of: use.range), what: "uses \(helper)")) }
            } else if declarations.count != 1 || confined.count != 1 {
                found.append(Escape(path: file.path, line: 1, what: "\(helper) must be declared once, fileprivate"))
            }
            // The helper's own body is the one escape allowed: on the line that declares it, in its file.
            let allowedLines = file.path == allowedFile ? Set(declarations.map { line(of: $0.range) }) : []
            for pattern in escapePatterns {
                for match in pattern.matches(in: code, range: whole) where !allowedLines.contains(line(of: match.range)) {
                    let text = (code as NSString).substring(with: match.range).split(whereSeparator: \.isWhitespace).joined(separator: " ")
                    found.append(Escape(path: file.path, line: line(of: match.range), what: "a pointer out of its withUnsafeBytes: \(text)"))
                }
            }
        }
        return found.sorted { ($0.path, $0.line) < ($1.path, $1.line) }
    }

    @Test func onlyTheSilentLookupKeepsAViewPastItsCallback() throws {
        let tree = try ArchitectureTests.tree.get()
        let files = tree.modules.values.joined()
        #expect(files.contains { $0.path == Self.allowedFile }, "the bucket read moved: update SpanEscapeTests and Docs/Architecture.md")
        let uses = files.filter { $0.path == Self.allowedFile }.map { file in
            file.lines.filter { String(decoding: $0, as: UTF8.self).contains(Self.helper) }.count
        }.reduce(0, +)
        #expect(uses >= 2, "the helper is declared and used in \(Self.allowedFile)")
        let escapes = Self.escapes(in: Array(files))
        #expect(escapes.isEmpty, "views that escape their callback: \(escapes.map(\.description).joined(separator: "; "))")
    }

    /// The check catches what it is for, in code and not in comments or strings.
    @Test func theCheckSeesEveryEscape() {
        let elsewhere = SwiftSource(
            path: "TokenCache/Store/Example.swift",
            text: ##"""
                /// withUnsafeBytes { $0 } and unsafeBytesValidForTheTransaction in a comment
                let message = "withUnsafeBytes(\.self)"
                let kept = span.unsafeBytesValidForTheTransaction
                let a = span.withUnsafeBytes { $0 }
                let b = span.withUnsafeBytes({ bytes in bytes })
                let c = span.withUnsafeBytes(\.self)
                let d = span.withUnsafeBytes {
                    $0
                }
                let fine = span.withUnsafeBytes { Array($0) }
                """##)
        #expect(Self.escapes(in: [elsewhere]).map(\.line) == [3, 4, 5, 6, 7])
        let allowed = SwiftSource(
            path: Self.allowedFile,
            text: ##"""
                let entry = key.unsafeBytesValidForTheTransaction
                extension RawSpan {
                    fileprivate var unsafeBytesValidForTheTransaction: UnsafeRawBufferPointer { withUnsafeBytes { $0 } }
                }
                let other = value.withUnsafeBytes { $0 }
                """##)
        #expect(Self.escapes(in: [allowed]).map(\.line) == [5])
        let widened = SwiftSource(
            path: Self.allowedFile,
            text: "extension RawSpan { var unsafeBytesValidForTheTransaction: UnsafeRawBufferPointer { withUnsafeBytes { $0 } } }"
        )
        #expect(Self.escapes(in: [widened]).map(\.what) == ["unsafeBytesValidForTheTransaction must be declared once, fileprivate"])
    }
}
