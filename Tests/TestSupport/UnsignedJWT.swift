/// A JWT made of a header and a payload given as JSON text, and a signature nobody checks (the library reads ID
/// tokens' claims, it does not validate them).
public func unsignedJWT(header: String = #"{"alg":"none"}"#, payload: String, signature: String = "") -> String {
    base64URL(header) + "." + base64URL(payload) + "." + signature
}
