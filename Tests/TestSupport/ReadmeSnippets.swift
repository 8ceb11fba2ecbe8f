import Foundation

/// The ```swift blocks of README.md, as the snippet tests compare them with their compiled copies.
///
/// A snippet test holds a block verbatim between `// README snippet N begin` and `// README snippet N end` and
/// defines around it what the README leaves to the reader. The README lists those names in the block's opening
/// comment, one declaration per line (`//   func signIn(loginHint: String?) async throws -> String`); a test declares
/// each exactly so, which is what makes the compiled copy a proof that the README's code compiles as a user who
/// writes those declarations gets it.
public struct ReadmeSnippets {
    /// Each block's lines, whitespace runs as one space, blank lines dropped.
    public let blocks: [[String]]

    /// The repository's README.
    public init() throws {
        let readme = try Repository.text("README.md")
        blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { Self.normalized($0.components(separatedBy: "```")[0]) }
    }

    /// `text`'s lines as the comparison sees them.
    public static func normalized(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            .filter { !$0.isEmpty }
    }

    /// The declarations a block leaves to the reader: its comment lines of the form `// let …` or `// func …`, without
    /// a trailing `// comment`.
    public static func declarationsLeftToTheReader(_ block: [String]) -> [String] {
        block.compactMap { line in
            guard line.hasPrefix("// let ") || line.hasPrefix("// func ") else { return nil }
            let declaration = line.dropFirst(3)
            return String(declaration.components(separatedBy: " // ")[0])
        }
    }

    /// What is wrong with `source`'s copy of `block` as snippet `number`: the lines between its markers differ from the
    /// block's (the block's own `import` line apart), or a declaration the block leaves to the reader is not declared
    /// exactly so in `source`. Empty when the copy is faithful.
    public static func problems(block: [String], number: Int, source: String, droppingImport importLine: String) -> [String] {
        let sourceLines = normalized(source)
        var lines = block
        var problems: [String] = []
        if lines.first == importLine { lines.removeFirst() }
        guard let begin = sourceLines.firstIndex(of: "// README snippet \(number) begin"),
            let end = sourceLines.firstIndex(of: "// README snippet \(number) end"), begin < end
        else { return ["no markers of README snippet \(number)"] }
        if Array(sourceLines[(begin + 1)..<end]) != lines { problems.append("README snippet \(number) differs from its copy") }
        for declaration in declarationsLeftToTheReader(lines) {
            let declared = sourceLines[..<begin].contains { line in
                line.hasPrefix(declaration + " ") || line == declaration || line.hasPrefix("@Sendable " + declaration + " ")
            }
            if !declared { problems.append("README snippet \(number) leaves `\(declaration)` to the reader; its copy does not declare it so") }
        }
        return problems
    }
}
