import Foundation
import Testing
import TokenCache

/// `JSONValue.prettyPrinted()`, what `cachetool --json` prints: empty arrays and objects on one line, nothing else
/// changed (the text parses back to the same value).
@Suite struct PrettyJSONTests {
    @Test func emptyContainersAreWrittenOnOneLine() throws {
        let value = JSONValue.object([
            "a": .array([]), "b": .object([:]), "c": .array([.integer(1), .array([]), .object(["d": .object([:])])]),
            "s": .string("[\n\n]"),  // a string that looks like one is not touched
        ])
        let text = value.prettyPrinted()
        #expect(text == """
            {
              "a" : [],
              "b" : {},
              "c" : [
                1,
                [],
                {
                  "d" : {}
                }
              ],
              "s" : "[\\n\\n]"
            }
            """)
        let parsed = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(parsed == value)
        #expect(JSONValue.array([]).prettyPrinted() == "[]")
        #expect(JSONValue.object([:]).prettyPrinted() == "{}")
    }
}
