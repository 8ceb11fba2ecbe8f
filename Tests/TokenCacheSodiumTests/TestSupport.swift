#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import Testing
import TokenCacheSodium

extension Array where Element == UInt8 {
    /// Bytes from a hex literal; traps on malformed input (test data only).
    init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count.isMultiple(of: 2), "odd hex length")
        self = stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
        }
    }
}

/// Seals `plaintext` into a fresh array.
func seal(_ plaintext: [UInt8], ad: [UInt8], nonce: [UInt8], key: SecureKey) throws(SodiumError) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: plaintext.count + XChaCha20Poly1305.tagByteCount)
    let result: Result<Void, SodiumError> = output.withUnsafeMutableBytes { output in
        plaintext.withUnsafeBytes { plaintext in
            ad.withUnsafeBytes { ad in
                nonce.withUnsafeBytes { nonce in
                    Result { () throws(SodiumError) in
                        try XChaCha20Poly1305.seal(plaintext, associatedData: ad, nonce: nonce, key: key, into: output)
                    }
                }
            }
        }
    }
    try result.get()
    return output
}

/// Opens `ciphertext` into an output pre-filled with 0xAA; returns the output and the error, if any.
func open(
    _ ciphertext: [UInt8], ad: [UInt8], nonce: [UInt8], key: SecureKey
) -> (output: [UInt8], error: SodiumError?) {
    var output = [UInt8](repeating: 0xAA, count: Swift.max(ciphertext.count - XChaCha20Poly1305.tagByteCount, 0))
    let result: Result<Void, SodiumError> = output.withUnsafeMutableBytes { output in
        ciphertext.withUnsafeBytes { ciphertext in
            ad.withUnsafeBytes { ad in
                nonce.withUnsafeBytes { nonce in
                    Result { () throws(SodiumError) in
                        try XChaCha20Poly1305.open(ciphertext, associatedData: ad, nonce: nonce, key: key, into: output)
                    }
                }
            }
        }
    }
    switch result {
    case .success: return (output, nil)
    case .failure(let error): return (output, error)
    }
}

func makeKey(_ bytes: [UInt8]) throws(SodiumError) -> SecureKey {
    let result: Result<SecureKey, SodiumError> = bytes.withUnsafeBytes { bytes in
        Result { () throws(SodiumError) in try SecureKey(copying: bytes) }
    }
    return try result.get()
}

func keyBytes(_ key: SecureKey) -> [UInt8] {
    key.withUnsafeBytes { Array($0) }
}
