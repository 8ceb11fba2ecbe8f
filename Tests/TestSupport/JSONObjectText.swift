public import Foundation

/// Compact JSON text of `object` (dictionaries, arrays, strings, numbers, booleans, `NSNull`), object keys sorted, so
/// that the same members always give the same bytes. Test data only: it traps on a value JSON cannot hold.
public func jsonText(_ object: Any) -> String {
    String(decoding: jsonData(object), as: UTF8.self)
}

public func jsonData(_ object: Any) -> Data {
    try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
}
