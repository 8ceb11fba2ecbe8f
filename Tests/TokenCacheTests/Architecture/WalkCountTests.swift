import Foundation
import TestSupport
import Testing

/// Docs/Walks.md counts the calls of a lookup hit and of an ingest by a rule it states, and Docs/Architecture.md quotes
/// the totals. Both documents are edited by hand whenever a change adds or removes a call, so these tests hold what a
/// hand edit gets wrong: the steps numbered without a gap, each walk's stated totals equal to the sum of its steps,
/// Architecture.md quoting the same figures, and every file and module a step names existing under `Sources/`.
@Suite struct WalkCountTests {
    /// One `### Walk` section of Walks.md.
    struct Walk {
        let title: String
        /// The numbers of its steps, in the order they appear.
        var numbers: [Int] = []
        /// Call sites: a step stands for one, or for N when it ends in "— N hops".
        var hops = 0
        /// Call sites of steps that cross a module line (`⇒ [Module]`).
        var moduleHops = 0
        /// The totals the section states in its bold line "**N hops, M of them across a module line.**".
        var statedHops: Int?
        var statedModuleHops: Int?
        /// Every `path.swift` and every `⇒ [Module]` its steps name.
        var files: Set<String> = []
        var modules: Set<String> = []
    }

    static let step = try! NSRegularExpression(pattern: #"^(\d+)\. (.*)$"#)
    static let weight = try! NSRegularExpression(pattern: #"— (\d+) hops"#)
    static let total = try! NSRegularExpression(pattern: #"^\*\*(\d+) hops, (\d+) of them across a module line\.\*\*"#)
    static let file = try! NSRegularExpression(pattern: #"`([A-Za-z0-9_+/]+\.swift)"#)
    static let module = try! NSRegularExpression(pattern: #"⇒ \[([A-Za-z]+)\]"#)

    static func groups(_ regex: NSRegularExpression, _ line: String) -> [[String]] {
        regex.matches(in: line, range: NSRange(line.startIndex..., in: line)).map { match in
            (1..<match.numberOfRanges).map { String(line[Range(match.range(at: $0), in: line)!]) }
        }
    }

    static func walks(in text: String) -> [Walk] {
        var walks: [Walk] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("### Walk") {
                walks.append(Walk(title: String(line.dropFirst(4))))
                continue
            }
            guard !walks.isEmpty else { continue }
            if let stated = groups(total, line).first {
                walks[walks.count - 1].statedHops = Int(stated[0])
                walks[walks.count - 1].statedModuleHops = Int(stated[1])
            }
            guard let parts = groups(step, line).first, let number = Int(parts[0]) else { continue }
            let count = groups(weight, line).first.flatMap { Int($0[0]) } ?? 1
            walks[walks.count - 1].numbers.append(number)
            walks[walks.count - 1].hops += count
            if line.contains("⇒") { walks[walks.count - 1].moduleHops += count }
            walks[walks.count - 1].files.formUnion(groups(file, line).map { $0[0] })
            walks[walks.count - 1].modules.formUnion(groups(module, line).map { $0[0] })
        }
        return walks
    }

    static func walks() throws -> [Walk] { walks(in: try Repository.text("Docs/Walks.md")) }

    @Test func stepsAreNumberedWithoutAGapAndAddUpToTheStatedTotals() throws {
        let walks = try Self.walks()
        #expect(walks.count == 2, "Walks.md should walk a lookup hit and an ingest")
        for walk in walks {
            #expect(walk.numbers == Array(1...max(walk.numbers.count, 1)), "\(walk.title): steps numbered with a gap or out of order")
            #expect(walk.statedHops == walk.hops, "\(walk.title): the steps add up to \(walk.hops) hops, the text says \(walk.statedHops.map(String.init) ?? "nothing")")
            #expect(
                walk.statedModuleHops == walk.moduleHops,
                "\(walk.title): \(walk.moduleHops) hops cross a module line, the text says \(walk.statedModuleHops.map(String.init) ?? "nothing")"
            )
        }
    }

    @Test func architectureQuotesTheWalksTotals() throws {
        let architecture = try Repository.text("Docs/Architecture.md").replacingOccurrences(of: "\n", with: " ")
        for walk in try Self.walks() {
            let quoted = "\(walk.hops) hops, \(walk.moduleHops) of them across a module line"
            #expect(architecture.contains(quoted), "Docs/Architecture.md should quote \(walk.title) as \"\(quoted)\"")
        }
    }

    @Test func everyFileAndModuleAStepNamesExists() throws {
        let modules = Set(try FileManager.default.contentsOfDirectory(atPath: SourceTree.root.path))
        var paths: Set<String> = []
        for module in modules {
            let root = SourceTree.root.appendingPathComponent(module)
            for case let path as String in FileManager.default.enumerator(atPath: root.path) ?? .init() where path.hasSuffix(".swift") {
                paths.insert(path)
                paths.insert((path as NSString).lastPathComponent)
            }
        }
        for walk in try Self.walks() {
            let strayFiles = walk.files.subtracting(paths).sorted()
            let strayModules = walk.modules.subtracting(modules).sorted()
            #expect(strayFiles.isEmpty, "\(walk.title) names files no module under Sources/ holds: \(strayFiles)")
            #expect(strayModules.isEmpty, "\(walk.title) names modules not under Sources/: \(strayModules)")
        }
    }

    /// The counter itself: a gap, a wrong total and a missing file are seen.
    @Test func theCountSeesAGapAWrongTotalAndAStrayFile() {
        let text = """
            ### Walk 9: a sample
            1. `A.swift:f` → `B.swift:g`
            3. `B.swift:g` ⇒ [TokenCacheRecords] `C.swift:h` — 2 hops

            **4 hops, 1 of them across a module line.**
            """
        let walk = Self.walks(in: text)[0]
        #expect(walk.numbers == [1, 3])
        #expect(walk.hops == 3 && walk.statedHops == 4)
        #expect(walk.moduleHops == 2 && walk.statedModuleHops == 1)
        #expect(walk.files == ["A.swift", "B.swift", "C.swift"])
        #expect(walk.modules == ["TokenCacheRecords"])
    }
}
