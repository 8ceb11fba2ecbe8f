import Foundation

/// Whether bytes are one JSON value (RFC 8259), for the JSON-typed fields of a field map (FORMAT.md §5.3).
///
/// The record layer only checks the syntax: turning the text into values is the model's business (its
/// `JSONValue`). Foundation's parser is the reference here; these fields are rare (unknown, non-string fields of
/// foreign writers), so the copy into `Data` is not on any hot path.
package enum JSONSyntax {
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
    }
}
