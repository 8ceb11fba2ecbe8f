import Foundation

/// Base64url without padding (RFC 4648 §5), as `client_info` and JWTs carry it. The library has only a decoder;
/// tests encode with this one, apart from it, so that a fault in the library's cannot hide in the tests' data.
public func base64URL(_ bytes: some Sequence<UInt8>) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

public func base64URL(_ text: String) -> String { base64URL(Array(text.utf8)) }
