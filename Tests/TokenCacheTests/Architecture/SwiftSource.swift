import Foundation

/// A Swift file as the architecture tests read it: its code with comments and the text of string literals blanked
/// out (an interpolation stays: it is code), so that a name in a comment or a message is not taken for a use. Line
/// numbers stay those of the file. A lexer of the little it needs, not a parser: declarations are found by their
/// keyword at the start of a line, uses by their name.
struct SwiftSource {
    /// Relative to `Sources/`, e.g. `TokenCache/Model/Secret.swift`.
    let path: String
    /// The lines of the code, comments and literal text replaced by spaces.
    let lines: [ArraySlice<UInt8>]

    init(path: String, text: String) {
        self.path = path
        let code = Self.blankingCommentsAndLiterals(Array(text.utf8))
        lines = code.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    }

    /// Every module an `import` line names (`@testable`, `@_exported`, `@_spi(…)`, `internal`, `public import`, and
    /// `import struct M.Name` alike), with its line.
    var imports: [(module: String, line: Int)] {
        lines.enumerated().compactMap { index, line in Self.importedModule(line).map { ($0, index + 1) } }
    }

    /// The top-level types, protocols, typealiases and functions the file declares. `extension X` declares nothing:
    /// it uses X.
    var declarations: [String] {
        lines.compactMap(Self.declaredName)
    }

    /// Every name the file declares, at any depth: a nested type or a member of the same name as a top-level
    /// declaration elsewhere is the file's own.
    var localNames: Set<String> {
        var names: Set<String> = []
        for line in lines where Self.importedModule(line) == nil {
            var words = Words(line)
            while let (word, _, _) = words.next() {
                if Self.declarationKeywords.contains(word), let (name, _, _) = words.next() { names.insert(name) }
            }
        }
        return names
    }

    /// Every name the file's code uses outside its import lines, with its line. A name after `.` is a member, not a
    /// top-level name, unless what stands before the dot is a module (`TokenCache.Secret`).
    func uses(qualifiedBy modules: Set<String>) -> [(name: String, line: Int)] {
        var uses: [(String, Int)] = []
        for (index, line) in lines.enumerated() where Self.importedModule(line) == nil {
            var words = Words(line)
            var previous: (word: String, end: Int)? = nil
            while let (word, start, end) = words.next() {
                let member = start > line.startIndex && line[start - 1] == UInt8(ascii: ".")
                let qualifiedByModule = member && previous.map { $0.end == start - 1 && modules.contains($0.word) } == true
                if !member || qualifiedByModule { uses.append((word, index + 1)) }
                previous = (word, end)
            }
        }
        return uses
    }

    // MARK: Lexing

    static let modifiers: Set<String> = [
        "public", "package", "internal", "fileprivate", "private", "open", "final", "indirect", "nonisolated", "dynamic",
    ]
    static let declarationKeywords: Set<String> = ["struct", "enum", "class", "actor", "protocol", "typealias", "func"]

    /// The name a line declares at the top level: no indentation, attributes and modifiers, a keyword, the name.
    static func declaredName(_ line: ArraySlice<UInt8>) -> String? {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else { return nil }
        var words = Words(line)
        while let (word, _, _) = words.next() {
            if modifiers.contains(word) { continue }
            guard declarationKeywords.contains(word), let (name, _, _) = words.next() else { return nil }
            return name
        }
        return nil
    }

    /// The module an import line names.
    static func importedModule(_ line: ArraySlice<UInt8>) -> String? {
        var words = Words(line)
        while let (word, _, _) = words.next() {
            if modifiers.contains(word) { continue }
            guard word == "import", var (module, _, _) = words.next() else { return nil }
            if ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"].contains(module) {
                guard let (name, _, _) = words.next() else { return nil }
                module = name
            }
            return module
        }
        return nil
    }

    /// The identifiers of a line, in order, attributes (`@x`, `@x(…)`) and `#`-directives passed over.
    struct Words {
        let line: ArraySlice<UInt8>
        var index: Int

        init(_ line: ArraySlice<UInt8>) {
            self.line = line
            index = line.startIndex
        }

        static func isHead(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || byte == UInt8(ascii: "_")
        }

        static func isBody(_ byte: UInt8) -> Bool { isHead(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) }

        mutating func next() -> (word: String, start: Int, end: Int)? {
            while index < line.endIndex {
                let byte = line[index]
                if byte == UInt8(ascii: "@") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "$") {
                    // An attribute or a directive, with its arguments when written right after it (`@_spi(Name)`).
                    index += 1
                    while index < line.endIndex, Self.isBody(line[index]) { index += 1 }
                    if byte == UInt8(ascii: "@"), index < line.endIndex, line[index] == UInt8(ascii: "(") { skipParentheses() }
                } else if Self.isHead(byte) {
                    let start = index
                    while index < line.endIndex, Self.isBody(line[index]) { index += 1 }
                    return (String(decoding: line[start..<index], as: UTF8.self), start, index)
                } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    // A number, with what may follow its digits (`0x1F`, `1e9`, `1_000`).
                    while index < line.endIndex, Self.isBody(line[index]) { index += 1 }
                } else {
                    index += 1
                }
            }
            return nil
        }

        mutating func skipParentheses() {
            var depth = 0
            while index < line.endIndex {
                if line[index] == UInt8(ascii: "(") { depth += 1 }
                if line[index] == UInt8(ascii: ")") {
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return
                    }
                }
                index += 1
            }
        }
    }

    /// `bytes` with comments (line, doc and nested block comments) and the text of string literals (plain, multi-line
    /// and raw) replaced by spaces; newlines, and the code of interpolations, kept.
    static func blankingCommentsAndLiterals(_ bytes: [UInt8]) -> [UInt8] {
        var blanker = Blanker(bytes: bytes)
        var index = 0
        blanker.code(&index, inInterpolation: false)
        return blanker.output
    }

    struct Blanker {
        let bytes: [UInt8]
        var output: [UInt8]

        init(bytes: [UInt8]) {
            self.bytes = bytes
            output = bytes
        }

        func byte(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func blank(_ index: Int) {
            if bytes[index] != UInt8(ascii: "\n") { output[index] = UInt8(ascii: " ") }
        }

        /// Code up to the end, or (in an interpolation) up to its closing parenthesis, which `index` is left at.
        mutating func code(_ index: inout Int, inInterpolation: Bool) {
            var depth = 0
            while index < bytes.count {
                let current = bytes[index]
                if current == UInt8(ascii: "/"), byte(index + 1) == UInt8(ascii: "/") {
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                        blank(index)
                        index += 1
                    }
                } else if current == UInt8(ascii: "/"), byte(index + 1) == UInt8(ascii: "*") {
                    blockComment(&index)
                } else if current == UInt8(ascii: "\"") || current == UInt8(ascii: "#") {
                    var hashes = 0
                    while byte(index + hashes) == UInt8(ascii: "#") { hashes += 1 }
                    if byte(index + hashes) == UInt8(ascii: "\"") {
                        stringLiteral(&index, hashes: hashes)
                    } else {
                        index += max(hashes, 1)
                    }
                } else {
                    if inInterpolation, current == UInt8(ascii: "(") { depth += 1 }
                    if inInterpolation, current == UInt8(ascii: ")") {
                        if depth == 0 { return }
                        depth -= 1
                    }
                    index += 1
                }
            }
        }

        mutating func blockComment(_ index: inout Int) {
            var depth = 0
            repeat {
                if bytes[index] == UInt8(ascii: "/"), byte(index + 1) == UInt8(ascii: "*") {
                    depth += 1
                    blank(index)
                    blank(index + 1)
                    index += 2
                } else if bytes[index] == UInt8(ascii: "*"), byte(index + 1) == UInt8(ascii: "/") {
                    depth -= 1
                    blank(index)
                    blank(index + 1)
                    index += 2
                } else {
                    blank(index)
                    index += 1
                }
            } while depth > 0 && index < bytes.count
        }

        /// From the literal's first `#` or `"` to just past its closing delimiter.
        mutating func stringLiteral(_ index: inout Int, hashes: Int) {
            index += hashes
            let multiline = byte(index + 1) == UInt8(ascii: "\"") && byte(index + 2) == UInt8(ascii: "\"")
            index += multiline ? 3 : 1
            let quotes = multiline ? 3 : 1
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\\"), (0..<hashes).allSatisfy({ byte(index + 1 + $0) == UInt8(ascii: "#") }) {
                    let afterEscape = index + 1 + hashes
                    if byte(afterEscape) == UInt8(ascii: "(") {
                        // An interpolation: its code is kept, literals inside it blanked in turn.
                        index = afterEscape + 1
                        code(&index, inInterpolation: true)
                        index += 1
                    } else {
                        for offset in index...min(afterEscape, bytes.count - 1) { blank(offset) }
                        index = afterEscape + 1
                    }
                } else if bytes[index] == UInt8(ascii: "\""), (0..<quotes).allSatisfy({ byte(index + $0) == UInt8(ascii: "\"") }),
                    (0..<hashes).allSatisfy({ byte(index + quotes + $0) == UInt8(ascii: "#") })
                {
                    index += quotes + hashes
                    return
                } else {
                    blank(index)
                    index += 1
                }
            }
        }
    }
}
