#!/usr/bin/env python3
"""Independent reference implementation of token-cache store format v4 (FORMAT.md), used to generate the
golden test vectors in Tests/TokenCacheTests/FormatVectors/.

This script is derived from FORMAT.md only (not from the Swift sources), so that the vectors cross-check the
Swift implementation. Section numbers (§n) below refer to FORMAT.md.

Run it with a Python that has PyNaCl (libsodium bindings) and cryptography (OpenSSL's AES-256-GCM):

    python3 -m venv /work/venv-vectors && /work/venv-vectors/bin/pip install pynacl cryptography
    /work/venv-vectors/bin/python Tests/FormatVectorGenerator/generate.py

It is deterministic: every nonce, key and timestamp is a fixed, obviously synthetic constant, so running it
twice produces byte-identical files. (Real writers MUST draw nonces from a CSPRNG; §5.1, §11.)

Vector file layout (what the Swift test runner parses):

    name: value          one per line; the encoding of `value` is decided by the suffix of `name`:
                           *_text  -> UTF-8 text, the rest of the line after ": " (may be empty)
                           *_int   -> decimal integer (may be negative)
                           other   -> lowercase hex bytes
    <empty line>
    <hex>                optional trailing block, lowercase hex wrapped at 64 characters per line
                         (whitespace ignored): the expected output bytes for a success case, the
                         offending input bytes for a failure case.

The first two lines are always `description_text` and `expect_text` (one of: success, authentication
failure, unknown key id, length out of range, unsupported version, invalid field map).
A field of a field map is written `field.<type>.<name>_<suffix>` with type text|int|json; json values are
given as compact JSON text (sorted keys, separators (',', ':'), ensure_ascii=False), suffix `_text`.

Besides writing the files, the script checks itself: it re-reads every file it wrote with an independent
parser, replays the scenario with its own reader (header unwrapping, record opening, field-map decoding,
required-field checks, storage-key re-derivation) and asserts that success cases round-trip and that failure
cases fail for exactly the stated reason. When a system libsodium is loadable through ctypes, the primitives
used via PyNaCl/hashlib are additionally cross-checked against it (crypto_kdf_derive_from_key,
crypto_generichash, crypto_aead_xchacha20poly1305_ietf_encrypt, crypto_pwhash).
"""

from __future__ import annotations

import base64
import ctypes
import ctypes.util
import hashlib
import json
import struct
import sys
from pathlib import Path

import nacl.bindings as sodium
import nacl.exceptions
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

# --------------------------------------------------------------------------------------------------------------
# §1 Conventions: integers, length prefixes, ascii_lower, primitives
# --------------------------------------------------------------------------------------------------------------


def u8(x: int) -> bytes:
    return struct.pack(">B", x)


def u16be(x: int) -> bytes:
    return struct.pack(">H", x)


def u32be(x: int) -> bytes:
    return struct.pack(">I", x)


def u64be(x: int) -> bytes:
    return struct.pack(">Q", x)


def i64be(x: int) -> bytes:
    return struct.pack(">q", x)


def lp(x: bytes) -> bytes:
    """lp(x) = u32be(len(x)) ‖ x"""
    return u32be(len(x)) + x


def ascii_lower(x: bytes) -> bytes:
    """Maps bytes 0x41-0x5A to 0x61-0x7A; every other byte (including non-ASCII UTF-8 bytes) is unchanged."""
    return bytes(b + 0x20 if 0x41 <= b <= 0x5A else b for b in x)


def seal(k: bytes, n: bytes, p: bytes, ad: bytes) -> bytes:
    """XChaCha20-Poly1305-IETF, combined mode: ciphertext ‖ tag[16]."""
    assert len(k) == 32 and len(n) == 24
    return sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(p, ad, n, k)


class AuthenticationFailure(Exception):
    reason = "authentication failure"


def open_(k: bytes, n: bytes, c: bytes, ad: bytes) -> bytes:
    assert len(k) == 32 and len(n) == 24
    try:
        return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(c, ad, n, k)
    except nacl.exceptions.CryptoError as e:
        raise AuthenticationFailure(str(e)) from None


CIPHER_XCHACHA, CIPHER_AES = 0x01, 0x02  # §6.1: the cipher a data key names


def aes_seal_key(k: bytes, seed: bytes) -> bytes:
    """§1: the one-message AES key of a seal: BLAKE2b-256 keyed by k, salt seed[0..<16], personalization
    seed[16..<24] ‖ "tcAESgcm", empty message."""
    assert len(k) == 32 and len(seed) == 24
    return hashlib.blake2b(b"", digest_size=32, key=k, salt=seed[:16], person=seed[16:24] + b"tcAESgcm").digest()


def aead_seal(cipher: int, k: bytes, n: bytes, p: bytes, ad: bytes) -> bytes:
    """Seal with a data key's cipher: XChaCha20-Poly1305 with nonce n, or AES-256-GCM under the key n seeds, nonce 0^12."""
    if cipher == CIPHER_XCHACHA:
        return seal(k, n, p, ad)
    assert cipher == CIPHER_AES and len(n) == 24
    return AESGCM(aes_seal_key(k, n)).encrypt(bytes(12), p, ad)


def aead_open(cipher: int, k: bytes, n: bytes, c: bytes, ad: bytes) -> bytes:
    if cipher == CIPHER_XCHACHA:
        return open_(k, n, c, ad)
    assert cipher == CIPHER_AES and len(n) == 24
    try:
        return AESGCM(aes_seal_key(k, n)).decrypt(bytes(12), c, ad)
    except InvalidTag:
        raise AuthenticationFailure("AES-256-GCM tag") from None


def H(x: bytes, n: int, key: bytes | None = None) -> bytes:
    """H_k(x, n): BLAKE2b with an n-byte output (crypto_generichash); unkeyed when key is None.
    hashlib's digest_size sets the BLAKE2b output-length parameter exactly as crypto_generichash does
    (it is not a truncation of a 64-byte digest)."""
    if key is None:
        return hashlib.blake2b(x, digest_size=n).digest()
    return hashlib.blake2b(x, digest_size=n, key=key).digest()


def KDF(k: bytes, subkey_id: int, ctx: str) -> bytes:
    """crypto_kdf_derive_from_key(32, id, ctx, k) = BLAKE2b-256, key k, salt u64le(id) ‖ 0^8,
    personalization ctx ‖ 0^8, empty message (§1)."""
    c = ctx.encode("ascii")
    assert len(k) == 32 and len(c) == 8
    salt = struct.pack("<Q", subkey_id) + bytes(8)
    person = c + bytes(8)
    return hashlib.blake2b(b"", digest_size=32, key=k, salt=salt, person=person).digest()


def argon2id(passphrase: bytes, salt: bytes, opslimit: int, memlimit: int) -> bytes:
    """crypto_pwhash with crypto_pwhash_ALG_ARGON2ID13, 32-byte output."""
    assert len(salt) == 16
    return sodium.crypto_pwhash_alg(32, passphrase, salt, opslimit, memlimit, sodium.crypto_pwhash_ALG_ARGON2ID13)


# --------------------------------------------------------------------------------------------------------------
# §6.4 Subkeys
# --------------------------------------------------------------------------------------------------------------


def record_key(data_key: bytes) -> bytes:
    return KDF(data_key, 1, "tcacheV1")


def index_key_of(min_data_key: bytes) -> bytes:
    return KDF(min_data_key, 2, "tcacheV1")


def fingerprint_key_of(min_data_key: bytes) -> bytes:
    return KDF(min_data_key, 3, "tcacheV1")


def fingerprint(fingerprint_key: bytes, db: str, key: bytes) -> str:
    """lowercase_hex(H_fingerprint_key(lp(db) ‖ key, 16)[0..<8]) (§6.4)."""
    return H(lp(db.encode()) + key, 16, fingerprint_key)[:8].hex()


# --------------------------------------------------------------------------------------------------------------
# §4 Storage keys: blind index
# --------------------------------------------------------------------------------------------------------------

SCOPE_WHITESPACE = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20}
SCOPE_ALLOWED = {0x21} | set(range(0x23, 0x5C)) | set(range(0x5D, 0x7F))  # RFC 6749 §3.3 NQCHAR


class InvalidScope(Exception):
    pass


def canon_plain(value: str | None) -> bytes:
    """home account id, environment, client id, realm, family id: ascii_lower; absent -> empty."""
    return ascii_lower((value or "").encode("utf-8"))


def canon_token_type(value: str | None) -> bytes:
    """ascii_lower(value); absent or empty -> "bearer"."""
    return ascii_lower(value.encode("utf-8")) if value else b"bearer"


def canon_key_id(value: str | None) -> bytes:
    """the value exactly; absent -> empty."""
    return (value or "").encode("utf-8")


def canon_target(value: str | None) -> bytes:
    """Split on ASCII whitespace, drop empty tokens, ascii_lower each, dedupe, sort bytewise, join with 0x20.
    Writers MUST reject any token byte outside RFC 6749's scope-token set (§4.2); enforced here."""
    raw = (value or "").encode("utf-8")
    tokens: list[bytes] = []
    cur = bytearray()
    for b in raw:
        if b in SCOPE_WHITESPACE:
            if cur:
                tokens.append(bytes(cur))
                cur = bytearray()
        else:
            cur.append(b)
    if cur:
        tokens.append(bytes(cur))
    for t in tokens:
        bad = [b for b in t if b not in SCOPE_ALLOWED]
        if bad:
            raise InvalidScope(f"scope token {t!r} has forbidden byte(s) {bytes(bad).hex()}")
    return b" ".join(sorted({ascii_lower(t) for t in tokens}))


def enc(*xs: bytes) -> bytes:
    return b"".join(lp(x) for x in xs)


def D(index_key: bytes, label: str, *fields: bytes) -> bytes:
    return H(enc(label.encode("ascii"), *fields), 16, index_key)


def P(index_key: bytes, hid: str | None) -> bytes:
    return D(index_key, "account", canon_plain(hid))


def O(index_key: bytes, uah: str) -> bytes:
    """An on-behalf-of partition's prefix (§4.1): the user assertion hash exactly, not lower-cased."""
    return D(index_key, "obo", uah.encode("utf-8"))


def T(index_key: bytes, f: dict) -> bytes:
    """The owner prefix of an access or refresh token (§4.1): its partition when it has one, else its account."""
    uah = f.get("user_assertion_hash") or ""
    return O(index_key, uah) if uah else P(index_key, f.get("home_account_id"))


def account_storage_key(ik: bytes, f: dict) -> bytes:
    return P(ik, f.get("home_account_id")) + D(
        ik, "account-entry", canon_plain(f.get("environment")), canon_plain(f.get("realm"))
    )


def access_token_storage_key(ik: bytes, f: dict) -> bytes:
    ext = canon_plain(f.get("ext_cache_key"))
    if ext:
        # A token with an extended cache key: a bucket of its own, under another label (§4.3).
        bucket = D(ik, "at-bucket-ext", canon_plain(f.get("client_id")), canon_plain(f.get("realm")),
                   canon_token_type(f.get("token_type")), ext, canon_key_id(f.get("key_id")))
    else:
        bucket = D(ik, "at-bucket", canon_plain(f.get("client_id")), canon_plain(f.get("realm")),
                   canon_token_type(f.get("token_type")), canon_key_id(f.get("key_id")))
    return (
        T(ik, f)
        + bucket
        + D(ik, "at-entry", canon_plain(f.get("environment")), canon_target(f.get("target")))
    )


def refresh_token_storage_key(ik: bytes, f: dict) -> bytes:
    family = canon_plain(f.get("family_id"))
    if family:
        owner = D(ik, "rt-owner", b"family", family)
    else:
        owner = D(ik, "rt-owner", b"client", canon_plain(f.get("client_id")))
    return T(ik, f) + owner + D(ik, "rt-entry", canon_plain(f.get("environment")))


def id_token_storage_key(ik: bytes, f: dict) -> bytes:
    return (
        P(ik, f.get("home_account_id"))
        + D(ik, "idt-owner", canon_plain(f.get("client_id")), canon_plain(f.get("realm")))
        + D(ik, "idt-entry", canon_plain(f.get("environment")))
    )


def app_metadata_storage_key(ik: bytes, f: dict) -> bytes:
    return D(ik, "app", canon_plain(f.get("client_id"))) + D(ik, "app-entry", canon_plain(f.get("environment")))


STORAGE_KEY = {
    "accounts": (account_storage_key, 32),
    "access_tokens": (access_token_storage_key, 48),
    "refresh_tokens": (refresh_token_storage_key, 48),
    "id_tokens": (id_token_storage_key, 48),
    "app_metadata": (app_metadata_storage_key, 32),
}

# --------------------------------------------------------------------------------------------------------------
# §5.3 Field maps and body plaintext
# --------------------------------------------------------------------------------------------------------------

T_TEXT, T_INT, T_JSON = 0x01, 0x02, 0x03
TYPE_CODE = {"text": T_TEXT, "int": T_INT, "json": T_JSON}
TYPE_NAME = {v: k for k, v in TYPE_CODE.items()}


def json_text(value) -> str:
    """The JSON serialization used for type-0x03 values in these vectors (FORMAT.md does not fix one)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def encode_value(kind: str, value) -> bytes:
    if kind == "text":
        return value.encode("utf-8")
    if kind == "int":
        return i64be(value)
    if kind == "json":
        return json_text(value).encode("utf-8")
    raise ValueError(kind)


def encode_field_map_in_order(fields: list[tuple[str, str, object]]) -> bytes:
    """Encode fields exactly in the given order (used to build the deliberately invalid, unordered vector)."""
    out = bytearray(u32be(len(fields)))
    for name, kind, value in fields:
        n = name.encode("utf-8")
        v = encode_value(kind, value)
        out += u8(TYPE_CODE[kind]) + u16be(len(n)) + n + u32be(len(v)) + v
    return bytes(out)


def encode_field_map(fields: list[tuple[str, str, object]]) -> bytes:
    """Writer: names sorted by their UTF-8 bytes (not by any Unicode collation or normalization)."""
    ordered = sorted(fields, key=lambda f: f[0].encode("utf-8"))
    names = [f[0].encode("utf-8") for f in ordered]
    assert all(names) and len(set(names)) == len(names), "names must be non-empty and unique"
    return encode_field_map_in_order(ordered)


class InvalidFieldMap(Exception):
    reason = "invalid field map"


def _reject_constant(c):
    raise ValueError(f"non-RFC-8259 JSON constant {c}")


def _ordered_name(prev: bytes | None, name_b: bytes) -> str:
    """§5.3: names strictly ascending as bytes, and UTF-8."""
    if prev is not None and not (prev < name_b):
        raise InvalidFieldMap(f"field names not strictly ascending: {prev!r} then {name_b!r}")
    try:
        return name_b.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidFieldMap("field name is not UTF-8") from None


def decode_field_map(buf: bytes, pos: int = 0) -> dict[str, tuple[str, object]]:
    """Reader: decodes a field map that must end exactly at the end of buf. Returns name -> (type, value)."""

    def take(n: int) -> bytes:
        nonlocal pos
        if n < 0 or pos + n > len(buf):
            raise InvalidFieldMap("truncated field map")
        b = buf[pos : pos + n]
        pos += n
        return b

    (count,) = struct.unpack(">I", take(4))
    out: dict[str, tuple[str, object]] = {}
    prev: bytes | None = None
    for _ in range(count):
        (t,) = struct.unpack(">B", take(1))
        (nlen,) = struct.unpack(">H", take(2))
        name_b = take(nlen)
        (vlen,) = struct.unpack(">I", take(4))
        value_b = take(vlen)
        if t not in TYPE_NAME:
            raise InvalidFieldMap(f"unknown field type 0x{t:02x}")
        if not name_b:
            raise InvalidFieldMap("empty field name")
        name = _ordered_name(prev, name_b)
        prev = name_b
        if t == T_INT:
            if vlen != 8:
                raise InvalidFieldMap("integer field value length is not 8")
            value = struct.unpack(">q", value_b)[0]
        else:
            try:
                text = value_b.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidFieldMap("text/JSON field value is not UTF-8") from None
            if t == T_JSON:
                try:
                    value = json.loads(text, parse_constant=_reject_constant)
                except ValueError:
                    raise InvalidFieldMap("JSON field value is not one JSON value") from None
            else:
                value = text
        out[name] = (TYPE_NAME[t], value)
    if pos != len(buf):
        raise InvalidFieldMap("bytes after the last field")
    return out


# §5.3 schema 2: field ids, varints, segmented text ----------------------------------------------------------

T_SEGMENTED = 0x04
FIELD_IDS = sorted(
    ["account_source", "alternative_account_id", "authority_type", "cached_at", "client_id", "client_info",
     "credential_type", "environment", "expires_on", "ext_cache_key", "extended_expires_on", "family_id",
     "family_name", "given_name", "home_account_id", "key_id", "last_modification_time", "local_account_id",
     "middle_name", "name", "realm", "refresh_on", "secret", "target", "token_type", "user_assertion_hash", "username"],
    key=lambda n: n.encode("utf-8"),
)
ID_OF = {name.encode("utf-8"): i + 1 for i, name in enumerate(FIELD_IDS)}
NAME_OF = {i: name for name, i in ID_OF.items()}
assert ID_OF[b"secret"] == 23 and ID_OF[b"account_source"] == 1 and ID_OF[b"username"] == 27


def varint(n: int) -> bytes:
    """§1: unsigned LEB128, shortest form, at most 2^32 - 1."""
    assert 0 <= n <= 0xFFFFFFFF
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift, start = 0, 0, pos
    while True:
        if pos >= len(buf):
            raise InvalidFieldMap("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift >= 35:
            raise InvalidFieldMap("varint longer than 5 bytes")
    if pos - start > 1 and buf[pos - 1] == 0:
        raise InvalidFieldMap("varint not in its shortest form")
    if value > 0xFFFFFFFF:
        raise InvalidFieldMap("varint above 2^32 - 1")
    return value, pos


B64U_ALPHABET = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def b64u(x: bytes) -> bytes:
    return base64.urlsafe_b64encode(x).rstrip(b"=")


def b64u_canonical_decode(text: bytes) -> bytes | None:
    """§1: the x with b64u(x) == text, or None (wrong length, a character outside the alphabet, set unused bits)."""
    if len(text) % 4 == 1 or not set(text) <= B64U_ALPHABET:
        return None
    x = base64.urlsafe_b64decode(text + b"=" * (-len(text) % 4))
    return x if b64u(x) == text else None


def encode_segmented(text: str) -> bytes:
    """§5.3 type 0x04: each dot-separated segment decoded when it is some b64u(x) with x non-empty, else as it is."""
    out = bytearray()
    for segment in text.encode("utf-8").split(b"."):
        x = b64u_canonical_decode(segment) if segment else None
        if x:
            out += varint(len(x) << 1) + x
        else:
            out += varint(len(segment) << 1 | 1) + segment
    return bytes(out)


def decode_segmented(value: bytes) -> str:
    pos, parts = 0, []
    if not value:
        raise InvalidFieldMap("segmented text without a segment")
    while pos < len(value):
        header, pos = read_varint(value, pos)
        count = header >> 1
        if pos + count > len(value):
            raise InvalidFieldMap("truncated segment")
        segment = value[pos : pos + count]
        pos += count
        if header & 1:
            if b"." in segment:
                raise InvalidFieldMap("a segment stored as it is holds '.'")
            try:
                segment.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidFieldMap("a segment stored as it is is not UTF-8") from None
            parts.append(segment)
        else:
            if count == 0:
                raise InvalidFieldMap("an empty decoded segment")
            parts.append(b64u(segment))
    return b".".join(parts).decode("utf-8")


SEGMENTED_FIELDS = {"secret"}  # what this writer stores as segmented text (§5.3)


def encode_field_map2(fields: list[tuple[str, str, object]], ordered: bool = True) -> bytes:
    """Schema 2 writer: names in ascending bytewise order, an id for each name of the table, varint lengths."""
    if ordered:
        fields = sorted(fields, key=lambda f: f[0].encode("utf-8"))
    out = bytearray(varint(len(fields)))
    for name, kind, value in fields:
        n = name.encode("utf-8")
        segmented = kind == "text" and name in SEGMENTED_FIELDS and len(encode_segmented(value)) < len(value.encode("utf-8"))
        out += u8(T_SEGMENTED if segmented else TYPE_CODE[kind])
        if n in ID_OF:
            out += u8(ID_OF[n])
        else:
            out += u8(0) + varint(len(n)) + n
        if kind == "int":
            out += i64be(value)
        else:
            v = encode_segmented(value) if segmented else encode_value(kind, value)
            out += varint(len(v)) + v
    return bytes(out)


def decode_field_map2(buf: bytes, pos: int = 0) -> dict[str, tuple[str, object]]:
    """Schema 2 reader: must end exactly at the end of buf. Segmented text reads as text."""
    count, pos = read_varint(buf, pos)
    out: dict[str, tuple[str, object]] = {}
    prev: bytes | None = None
    for _ in range(count):
        if pos + 2 > len(buf):
            raise InvalidFieldMap("truncated field")
        t, fid = buf[pos], buf[pos + 1]
        pos += 2
        if fid == 0:
            nlen, pos = read_varint(buf, pos)
            name_b = buf[pos : pos + nlen]
            if len(name_b) != nlen:
                raise InvalidFieldMap("truncated name")
            pos += nlen
            if not name_b:
                raise InvalidFieldMap("empty field name")
            if name_b in ID_OF:
                raise InvalidFieldMap("a name that has an id written out")
        elif fid in NAME_OF:
            name_b = NAME_OF[fid]
        else:
            raise InvalidFieldMap(f"unknown field id {fid}")
        name = _ordered_name(prev, name_b)
        prev = name_b
        if t == T_INT:
            if pos + 8 > len(buf):
                raise InvalidFieldMap("truncated integer")
            value: object = struct.unpack(">q", buf[pos : pos + 8])[0]
            pos += 8
            out[name] = ("int", value)
            continue
        vlen, pos = read_varint(buf, pos)
        value_b = buf[pos : pos + vlen]
        if len(value_b) != vlen:
            raise InvalidFieldMap("truncated value")
        pos += vlen
        if t == T_SEGMENTED:
            if name_b != b"secret":
                raise InvalidFieldMap("segmented text on a field other than secret")
            out[name] = ("text", decode_segmented(value_b))
            continue
        if t not in (T_TEXT, T_JSON):
            raise InvalidFieldMap(f"unknown field type 0x{t:02x}")
        try:
            text = value_b.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidFieldMap("text/JSON field value is not UTF-8") from None
        if t == T_JSON:
            try:
                out[name] = ("json", json.loads(text, parse_constant=_reject_constant))
            except ValueError:
                raise InvalidFieldMap("JSON field value is not one JSON value") from None
        else:
            out[name] = ("text", text)
    if pos != len(buf):
        raise InvalidFieldMap("bytes after the last field")
    return out


def encode_body(revision: int, updated_at: int, fields: list[tuple[str, str, object]]) -> bytes:
    """§5.3, schema 2 (what version 4 writes): credential_type left out (the database names the kind)."""
    assert revision >= 1
    stored = [f for f in fields if f[0] != "credential_type"]
    return u8(0x02) + u64be(revision) + i64be(updated_at) + encode_field_map2(stored)


def encode_body_v1(revision: int, updated_at: int, fields: list[tuple[str, str, object]]) -> bytes:
    """§5.3, schema 1 (what versions 1 to 3 wrote; still read)."""
    assert revision >= 1
    return u8(0x01) + u64be(revision) + i64be(updated_at) + encode_field_map(fields)


def encode_summary(fields: list[tuple[str, str, object]]) -> bytes:
    """§5.4, schema 2: u8 0x02 || field_map2."""
    return u8(0x02) + encode_field_map2(fields)


def decode_summary(plain: bytes) -> dict[str, tuple[str, object]]:
    """§5.4: schema 2 leads with 0x02; schema 1 is a bare field_map, whose first byte (of a u32be count) is 0."""
    if plain[:1] == b"\x02":
        return decode_field_map2(plain, 1)
    if plain[:1] == b"\x00":
        return decode_field_map(plain)
    raise InvalidFieldMap("summary of unknown schema")


class CorruptRecord(Exception):
    reason = "corrupt record"


def decode_body(body: bytes) -> tuple[int, int, dict]:
    if len(body) < 17:
        raise CorruptRecord("body too short")
    if body[0] not in (0x01, 0x02):
        raise CorruptRecord(f"unsupported body schema {body[0]}")
    revision = struct.unpack(">Q", body[1:9])[0]
    updated_at = struct.unpack(">q", body[9:17])[0]
    return revision, updated_at, (decode_field_map2(body, 17) if body[0] == 0x02 else decode_field_map(body, 17))


# Modelled fields of each kind (§5.3): name -> (type, required)
def _model(text: str, ints: str) -> dict[str, tuple[str, bool]]:
    m = {}
    for group, kind in ((text, "text"), (ints, "int")):
        for n in group.split():
            m[n.rstrip("R")] = (kind, n.endswith("R"))
    return m


# A trailing "R" marks a required field (ᴿ in FORMAT.md).
MODEL = {
    "access_tokens": _model(
        "credential_type home_account_idR environmentR client_idR realmR targetR secretR token_type key_id "
        "user_assertion_hash",
        "cached_atR expires_onR extended_expires_on refresh_on",
    ),
    "refresh_tokens": _model(
        "credential_type home_account_idR environmentR client_idR secretR family_id target realm user_assertion_hash",
        "last_modification_time expires_on",
    ),
    "id_tokens": _model("credential_type home_account_idR environmentR client_idR realmR secretR", ""),
    "accounts": _model(
        "home_account_idR environmentR realmR authority_typeR local_account_id username account_source name "
        "given_name family_name middle_name alternative_account_id client_info",
        "",
    ),
    "app_metadata": _model("client_idR environmentR family_id", ""),
}


def check_entity(db: str, fields: dict[str, tuple[str, object]]) -> None:
    """Required fields present, modelled fields of the modelled type (§5.3)."""
    for name, (kind, required) in MODEL[db].items():
        if name in fields:
            if fields[name][0] != kind:
                raise CorruptRecord(f"modelled field {name} has type {fields[name][0]}, expected {kind}")
        elif required:
            raise CorruptRecord(f"required field {name} missing")


def stored_fields(fields: dict[str, tuple[str, object]]) -> dict[str, tuple[str, object]]:
    """What a body of schema 2 holds of an entity's fields: all but credential_type (§5.3)."""
    return {n: kv for n, kv in fields.items() if n != "credential_type"}


def modelled_values(db: str, fields: dict[str, tuple[str, object]]) -> dict:
    return {n: v for n, (k, v) in fields.items() if n in MODEL[db]}


def summary_fields_of(body_fields: dict[str, tuple[str, object]]) -> list[tuple[str, str, object]]:
    """§5.4: environment (as in the body), target (canonical), cached_at, expires_on, refresh_on if present."""
    s = [
        ("environment", "text", body_fields["environment"][1]),
        ("target", "text", canon_target(body_fields["target"][1]).decode("utf-8")),
        ("cached_at", "int", body_fields["cached_at"][1]),
        ("expires_on", "int", body_fields["expires_on"][1]),
    ]
    if "refresh_on" in body_fields:
        s.append(("refresh_on", "int", body_fields["refresh_on"][1]))
    return s


# --------------------------------------------------------------------------------------------------------------
# §5.1 / §5.2 Record envelope
# --------------------------------------------------------------------------------------------------------------

ENVELOPE_VERSION = 0x01
S_MIN, S_MAX = 40, 40 + 65536
B_MIN, B_MAX = 40, 40 + 262144


class UnsupportedVersion(Exception):
    reason = "unsupported version"


class LengthOutOfRange(Exception):
    reason = "length out of range"


class UnknownKeyId(Exception):
    reason = "unknown key id"


def ad_base(store_id: bytes, db: str, lmdb_key: bytes, key_id: int) -> bytes:
    assert len(store_id) == 16
    return b"tcache/v1/record" + store_id + lp(db.encode("ascii")) + lp(lmdb_key) + b"\x01" + u32be(key_id)


def seal_record(
    store_id: bytes,
    db: str,
    lmdb_key: bytes,
    key_id: int,
    data_key: bytes,
    summary_plain: bytes | None,
    summary_nonce: bytes | None,
    body_plain: bytes,
    body_nonce: bytes,
    cipher: int = CIPHER_XCHACHA,
) -> bytes:
    rk = record_key(data_key)
    base = ad_base(store_id, db, lmdb_key, key_id)
    if summary_plain is None:
        summary_section = b""
        summary_bound = b""
    else:
        summary_section = summary_nonce + aead_seal(cipher, rk, summary_nonce, summary_plain, base + b"\x53")
        summary_bound = summary_section  # §5.2: AD_B covers the whole summary section
    body_section = body_nonce + aead_seal(cipher, rk, body_nonce, body_plain, base + b"\x42" + summary_bound)
    S, B = len(summary_section), len(body_section)
    assert S == 0 or S_MIN <= S <= S_MAX
    assert B_MIN <= B <= B_MAX
    return u8(ENVELOPE_VERSION) + u32be(key_id) + u32be(S) + summary_section + body_section


def open_record(
    value: bytes, store_id: bytes, db: str, lmdb_key: bytes, data_keys: dict[int, bytes], ciphers: dict[int, int] | None = None
) -> tuple[bytes | None, bytes]:
    """Reader. Order of checks: version, lengths (all before any decryption), key id, summary AEAD, body AEAD."""
    if len(value) < 9:
        raise LengthOutOfRange("envelope shorter than its 9-byte fixed part")
    if value[0] != ENVELOPE_VERSION:
        raise UnsupportedVersion(f"envelope version 0x{value[0]:02x}")
    key_id = struct.unpack(">I", value[1:5])[0]
    S = struct.unpack(">I", value[5:9])[0]
    if not (S == 0 or S_MIN <= S <= S_MAX):
        raise LengthOutOfRange(f"S = {S}")
    B = len(value) - 9 - S
    if not (B_MIN <= B <= B_MAX):
        raise LengthOutOfRange(f"B = {B}")
    if key_id not in data_keys:
        raise UnknownKeyId(f"key id {key_id}")
    rk = record_key(data_keys[key_id])
    cipher = (ciphers or {}).get(key_id, CIPHER_XCHACHA)
    base = ad_base(store_id, db, lmdb_key, key_id)
    summary_section = value[9 : 9 + S]
    body_section = value[9 + S :]
    summary_plain = None
    if S:
        summary_plain = aead_open(cipher, rk, summary_section[:24], summary_section[24:], base + b"\x53")
    summary_bound = summary_section if S else b""
    body_plain = aead_open(cipher, rk, body_section[:24], body_section[24:], base + b"\x42" + summary_bound)
    return summary_plain, body_plain


def read_record(value: bytes, store_id: bytes, db: str, lmdb_key: bytes, data_keys: dict[int, bytes],
                ciphers: dict[int, int] | None = None):
    """Full reader path: envelope, body, field map, model checks, and invariant 3 (storage key from fields)."""
    summary_plain, body_plain = open_record(value, store_id, db, lmdb_key, data_keys, ciphers)
    revision, updated_at, fields = decode_body(body_plain)
    if revision < 1:
        raise CorruptRecord("revision 0")
    if db == "meta":
        # The sealed meta records, no summary and no storage key rule: §5.5, one type 0x03 field per kept section;
        # §5.6, one integer field maximum_count of at least 1.
        if lmdb_key == b"foreign-sections":
            if any(kind != "json" for kind, _ in fields.values()):
                raise CorruptRecord("a kept MSAL section is not a JSON field (§5.5)")
        elif lmdb_key == b"access-token-cap":
            if list(fields) != ["maximum_count"] or fields["maximum_count"][0] != "int" or fields["maximum_count"][1] < 1:
                raise CorruptRecord("the access-token cap is not one integer maximum_count of at least 1 (§5.6)")
        elif lmdb_key.startswith(b"refresh-lease/"):
            lease_shape = [("expires_at", "int"), ("holder", "text"), ("pid", "int")]
            shape = [(name, kind) for name, (kind, _) in fields.items()]
            if shape != lease_shape and shape != lease_shape + [("refused_revision", "int")]:
                raise CorruptRecord("a refresh lease is not exactly expires_at, holder, pid and an optional refused_revision (§5.7)")
        else:
            raise CorruptRecord("no sealed meta record has this key")
        return revision, updated_at, fields, None
    check_entity(db, fields)
    summary = decode_summary(summary_plain) if summary_plain is not None else None
    ik = index_key_of(data_keys[min(data_keys)])
    fn, size = STORAGE_KEY[db]
    computed = fn(ik, modelled_values(db, fields))
    assert len(computed) == size
    # Invariant 3; an access token may also be its bucket's lone token, under the 32-byte bucket prefix (§4.3).
    lone = db == "access_tokens" and lmdb_key == computed[:32]
    if computed != lmdb_key and not lone:
        raise CorruptRecord("storage key does not match the record's own fields (invariant 3)")
    return revision, updated_at, fields, summary


# --------------------------------------------------------------------------------------------------------------
# §6 Header and key hierarchy
# --------------------------------------------------------------------------------------------------------------

MAGIC = b"TKCACHE\x00"
ROOT_RAW, ROOT_PASSPHRASE = 0x01, 0x02


FORMAT_READ_VERSION = 4  # §7: version 4 writes bodies of schema 2; 3 names each data key's cipher (§6.1); 2 placed lone tokens (§4.3)
FORMAT_WRITE_VERSION = 4


def key_entry_count(version: int) -> int:
    """Bytes of one wrapped key (§6.1): version 3 added the cipher byte."""
    return 85 if version >= 3 else 84


def kek_of(root: bytes) -> bytes:
    return KDF(root, 1, "tcKEKv01")


def header_prefix(store_id: bytes, root_kind: int, opslimit: int, memlimit: int, salt: bytes,
                  version: int = FORMAT_READ_VERSION) -> bytes:
    """header[0 ..< 61] (read and write version alike)"""
    p = MAGIC + u16be(version) + u16be(version) + store_id + u8(root_kind) + u64be(opslimit) + u64be(memlimit) + salt
    assert len(p) == 61
    return p


def ad_wrap(prefix: bytes, key_list: list[tuple[int, int, int]], key_id: int, version: int) -> bytes:
    """AD_W (§6.3): the fixed prefix, then the whole key list (ids, dates and, from version 3, ciphers), then this
    key's id."""
    listed = u8(len(key_list)) + b"".join(u32be(i) + i64be(c) + (u8(a) if version >= 3 else b"") for i, c, a in key_list)
    return b"tcache/v1/wrap" + prefix + listed + u32be(key_id)


def build_header(
    store_id: bytes,
    root_kind: int,
    opslimit: int,
    memlimit: int,
    salt: bytes,
    kek: bytes,
    keys: list[tuple[int, int, bytes, bytes, int]],  # (key_id, created_at, data_key, nonce, cipher)
    version: int = FORMAT_READ_VERSION,
) -> bytes:
    assert 1 <= len(keys) <= 32
    assert keys[0][0] >= 1 and all(a[0] < b[0] for a, b in zip(keys, keys[1:]))
    assert version >= 3 or all(k[4] == CIPHER_XCHACHA for k in keys)  # before version 3, every key is XChaCha's
    prefix = header_prefix(store_id, root_kind, opslimit, memlimit, salt, version)
    h = bytearray(prefix + u8(len(keys)))
    key_list = [(key_id, created_at, cipher) for key_id, created_at, _, _, cipher in keys]
    for key_id, created_at, dk, nonce, cipher in keys:
        sealed = seal(kek, nonce, dk, ad_wrap(prefix, key_list, key_id, version))  # wraps are always XChaCha's
        assert len(sealed) == 48
        h += u32be(key_id) + i64be(created_at) + (u8(cipher) if version >= 3 else b"") + nonce + sealed
    h += H(bytes(h), 16)
    assert len(h) == 62 + key_entry_count(version) * len(keys) + 16
    return bytes(h)


class CorruptHeader(Exception):
    reason = "corrupt store"


class WrongKey(Exception):
    reason = "wrong key"


def parse_header(h: bytes, raw_root: bytes | None = None, passphrase: bytes | None = None):
    """Reader: returns (store_id, root_kind, opslimit, memlimit, salt, {key_id: data_key}, root, kek); the ciphers of
    the keys are in parse_header.ciphers afterwards."""
    if len(h) < 12 or h[:8] != MAGIC:
        raise CorruptHeader("magic")
    read_v, write_v = struct.unpack(">HH", h[8:12])
    if read_v > FORMAT_READ_VERSION:
        raise CorruptHeader("unsupported format version")  # §7: nothing after offset 12 is interpreted
    if len(h) < 62:
        raise CorruptHeader("short header")
    n = h[61]
    E = key_entry_count(read_v)
    if not (1 <= n <= 32) or len(h) != 62 + E * n + 16:
        raise CorruptHeader("key count / length")
    if H(h[: 62 + E * n], 16) != h[62 + E * n :]:
        raise CorruptHeader("checksum")
    store_id = h[12:28]
    root_kind = h[28]
    opslimit, memlimit = struct.unpack(">QQ", h[29:45])
    salt = h[45:61]
    if root_kind == ROOT_RAW:
        assert opslimit == 0 and memlimit == 0 and salt == bytes(16)
        root = raw_root
    elif root_kind == ROOT_PASSPHRASE:
        # §6.2: refuse out-of-range parameters before running Argon2id
        if opslimit < 2 or memlimit < 64 * 2**20 or memlimit > 2**30 or opslimit * memlimit > 4 * 2**30:
            raise CorruptHeader("Argon2id parameters out of range")
        root = argon2id(passphrase, salt, opslimit, memlimit)
    else:
        raise CorruptHeader("root kind")
    kek = kek_of(root)
    prefix = h[:61]
    keys: dict[int, bytes] = {}
    entries = [h[62 + E * i : 62 + E * (i + 1)] for i in range(n)]
    key_list = [(*struct.unpack(">Iq", e[:12]), e[12] if read_v >= 3 else CIPHER_XCHACHA) for e in entries]
    if any(cipher not in (CIPHER_XCHACHA, CIPHER_AES) for _, _, cipher in key_list):
        raise CorruptHeader("unknown cipher")
    prev = 0
    for e, (key_id, _, _) in zip(entries, key_list):
        if key_id <= prev:
            raise CorruptHeader("key ids not strictly ascending from 1")
        prev = key_id
        nonce, sealed = e[E - 72 : E - 48], e[E - 48 :]
        try:
            keys[key_id] = open_(kek, nonce, sealed, ad_wrap(prefix, key_list, key_id, read_v))
        except AuthenticationFailure:
            raise WrongKey(f"data key {key_id} does not open") from None
    parse_header.ciphers = {key_id: cipher for key_id, _, cipher in key_list}
    return store_id, root_kind, opslimit, memlimit, salt, keys, root, kek


# --------------------------------------------------------------------------------------------------------------
# Vector files: writer and an independent parser (used to replay every file)
# --------------------------------------------------------------------------------------------------------------

OUT_DIR = Path(__file__).resolve().parent.parent / "TokenCacheTests" / "FormatVectors"


def field_lines(fields: list[tuple[str, str, object]]) -> list[tuple[str, object]]:
    out = []
    for name, kind, value in fields:
        if kind == "text":
            out.append((f"field.text.{name}_text", value))
        elif kind == "int":
            out.append((f"field.int.{name}_int", value))
        else:
            out.append((f"field.json.{name}_text", json_text(value)))
    return out


def render(lines: list[tuple[str, object]], block: bytes | None) -> str:
    names = [n for n, _ in lines]
    assert len(set(names)) == len(names), "duplicate line name"
    assert names[0] == "description_text" and names[1] == "expect_text"
    text = []
    for name, value in lines:
        assert ":" not in name and "\n" not in name
        if name.endswith("_text"):
            assert isinstance(value, str) and "\n" not in value and "\r" not in value
            text.append(f"{name}: {value}")
        elif name.endswith("_int"):
            assert isinstance(value, int)
            text.append(f"{name}: {value}")
        else:
            assert isinstance(value, bytes)
            text.append(f"{name}: {value.hex()}")
    text.append("")
    if block is not None:
        h = block.hex()
        text.extend(h[i : i + 64] for i in range(0, len(h), 64))
    return "\n".join(text) + "\n"


def parse_vector(content: str) -> tuple[dict[str, object], list[tuple[str, str, object]], bytes | None]:
    """Independent parser of the vector format. Returns (values, fields-in-file-order, trailing block)."""
    lines = content.split("\n")
    values: dict[str, object] = {}
    fields = []
    i = 0
    while lines[i] != "":
        name, sep, rest = lines[i].partition(": ")
        if not sep:  # tolerate "name:" with nothing after it (an empty text value)
            assert lines[i].endswith(":")
            name, rest = lines[i][:-1], ""
        assert name not in values
        if name.endswith("_text"):
            v: object = rest
        elif name.endswith("_int"):
            v = int(rest)
        else:
            v = bytes.fromhex(rest)
        values[name] = v
        if name.startswith("field."):
            _, kind, tail = name.split(".", 2)
            fname = tail[: -len("_int")] if tail.endswith("_int") else tail[: -len("_text")]
            fields.append((fname, kind, json.loads(v) if kind == "json" else v))
        i += 1
    rest_hex = "".join("".join(lines[i + 1 :]).split())
    block = bytes.fromhex(rest_hex) if rest_hex else None
    return values, fields, block


def write_vector(filename: str, lines: list[tuple[str, object]], block: bytes | None) -> None:
    content = render(lines, block)
    path = OUT_DIR / filename
    path.write_bytes(content.encode("utf-8"))
    # Round-trip the file through the parser: what a runner reads is what we meant.
    values, _, parsed_block = parse_vector(path.read_bytes().decode("utf-8"))
    assert parsed_block == block
    for name, value in lines:
        assert values[name] == value, name
    WRITTEN.append(filename)


WRITTEN: list[str] = []


def expect_failure(reason: str, fn) -> None:
    """Assert fn() raises the exception whose .reason is exactly `reason`."""
    try:
        fn()
    except (AuthenticationFailure, UnsupportedVersion, LengthOutOfRange, UnknownKeyId, InvalidFieldMap) as e:
        assert e.reason == reason, f"expected {reason!r}, got {e.reason!r}: {e}"
        return
    raise AssertionError(f"expected failure {reason!r}, but it succeeded")


# --------------------------------------------------------------------------------------------------------------
# Fixed, synthetic inputs
# --------------------------------------------------------------------------------------------------------------

DATA_KEY = bytes(range(32))  # data key, key id 1 (the only, hence also the min-id and the active key)
KEY_ID = 1
ROOT_KEY = bytes(range(32, 64))  # raw root key
STORE_ID = bytes(range(0xA0, 0xB0))
CREATED_AT = 1795353806
PASSPHRASE = "correct horse battery staple"
SALT = bytes([0x5A] * 16)
OPSLIMIT = 2
MEMLIMIT = 67108864  # 64 MiB, the smallest value a reader accepts (§6.2)

NONCE_AT_SUMMARY = bytes(range(0x10, 0x28))
NONCE_AT_BODY = bytes(range(0x30, 0x48))
NONCE_ACCOUNT_BODY = bytes(range(0x50, 0x68))
NONCE_WRAP_RAW = bytes(range(0x70, 0x88))
NONCE_WRAP_PASSPHRASE = bytes(range(0x90, 0xA8))
NONCE_LONE_SUMMARY = bytes(range(0xB0, 0xC8))
NONCE_LONE_BODY = bytes(range(0xD0, 0xE8))
NONCE_SECTIONS_BODY = bytes(range(0xE8, 0x100))
NONCE_CAP_BODY = bytes([0xC3] * 24)
NONCE_WRAP_SECOND = bytes([0xD4] * 24)
NONCE_LEASE_BODY = bytes([0xE5] * 24)
NONCE_REFUSAL_BODY = bytes([0xF6] * 24)
NONCE_V3_SUMMARY = bytes([0xA1] * 24)
NONCE_V3_BODY = bytes([0xB2] * 24)
DATA_KEY_2 = bytes(range(0x40, 0x60))  # a second data key, key id 2: what the first step of a rotation adds (§6.5)
CREATED_AT_2 = 1795440206

HOME_ACCOUNT_ID = "uid1.utid1"
ENVIRONMENT = "login.microsoftonline.com"
REALM = "utid1"
CLIENT_ID = "b3f5c2d4-0000-4000-8000-00000000c11e"
TARGET = "User.Read  openid Mail.Read user.read"  # non-canonical on purpose
CANONICAL_TARGET = "mail.read openid user.read"
TOKEN_TYPE = "Bearer"
FAMILY_ID = "1"
AT_SECRET = "eyJ0eXAiOiJKV1QifQ.fake-access-token.sig"

INDEX_KEY = index_key_of(DATA_KEY)
FINGERPRINT_KEY = fingerprint_key_of(DATA_KEY)
RECORD_KEY = record_key(DATA_KEY)


# --------------------------------------------------------------------------------------------------------------
# Optional cross-check of the primitives against the system libsodium (1.0.18 where available)
# --------------------------------------------------------------------------------------------------------------


def crosscheck_with_system_libsodium() -> str:
    path = ctypes.util.find_library("sodium")
    if not path:
        return "system libsodium not found; primitive cross-check skipped"
    lib = ctypes.CDLL(path)
    if lib.sodium_init() < 0:
        return "system libsodium failed to initialise; cross-check skipped"
    lib.sodium_version_string.restype = ctypes.c_char_p
    version = lib.sodium_version_string().decode()

    # crypto_kdf_derive_from_key vs. the BLAKE2b formula of §1
    for master, sid, ctx in ((DATA_KEY, 1, "tcacheV1"), (DATA_KEY, 2, "tcacheV1"), (DATA_KEY, 3, "tcacheV1"),
                             (ROOT_KEY, 1, "tcKEKv01"), (DATA_KEY, 2**64 - 1, "tcKEKv01")):
        out = ctypes.create_string_buffer(32)
        rc = lib.crypto_kdf_derive_from_key(out, ctypes.c_size_t(32), ctypes.c_uint64(sid), ctx.encode(), master)
        assert rc == 0 and out.raw == KDF(master, sid, ctx), "crypto_kdf formula mismatch"

    # crypto_generichash (keyed and unkeyed, 8/16-byte outputs) vs. hashlib
    for key in (None, INDEX_KEY, FINGERPRINT_KEY):
        for n in (8, 16, 32):
            msg = b"tcache" * 7
            out = ctypes.create_string_buffer(n)
            rc = lib.crypto_generichash(out, ctypes.c_size_t(n), msg, ctypes.c_ulonglong(len(msg)),
                                        key, ctypes.c_size_t(0 if key is None else len(key)))
            assert rc == 0 and out.raw == H(msg, n, key), "crypto_generichash mismatch"

    # crypto_aead_xchacha20poly1305_ietf_encrypt vs. PyNaCl
    msg, ad = b"summary plaintext", b"associated data"
    out = ctypes.create_string_buffer(len(msg) + 16)
    clen = ctypes.c_ulonglong(0)
    rc = lib.crypto_aead_xchacha20poly1305_ietf_encrypt(out, ctypes.byref(clen), msg, ctypes.c_ulonglong(len(msg)),
                                                        ad, ctypes.c_ulonglong(len(ad)), None,
                                                        NONCE_AT_SUMMARY, RECORD_KEY)
    assert rc == 0 and out.raw[: clen.value] == seal(RECORD_KEY, NONCE_AT_SUMMARY, msg, ad), "AEAD mismatch"

    # crypto_pwhash (Argon2id13) vs. PyNaCl
    out = ctypes.create_string_buffer(32)
    pw = PASSPHRASE.encode()
    rc = lib.crypto_pwhash(out, ctypes.c_ulonglong(32), pw, ctypes.c_ulonglong(len(pw)), SALT,
                           ctypes.c_ulonglong(OPSLIMIT), ctypes.c_size_t(MEMLIMIT), ctypes.c_int(2))
    assert rc == 0 and out.raw == argon2id(pw, SALT, OPSLIMIT, MEMLIMIT), "crypto_pwhash mismatch"
    return f"primitives cross-checked against system libsodium {version} ({path})"


# --------------------------------------------------------------------------------------------------------------
# The vectors
# --------------------------------------------------------------------------------------------------------------


# An MSAL extended cache key as MSAL Python derives it (for fmi_path "SomeFmiPath/FmiCredentialPath"), with one
# upper-case letter to exercise ascii_lower.
EXT_CACHE_KEY = "Cojvfy5tzae3njpkvcebguvvx5vvmnj8hphqrbogjoi"
# An MSAL .NET user assertion hash (base64url SHA-256 of an assertion), mixed case as such hashes are.
USER_ASSERTION_HASH = "ehRedFWakzoJSXaWhi5KaXle1gqE70lscr6Yhs3SFrE"


def v_blind_index() -> bytes:
    # Mixed case on home account id and environment exercises ascii_lower.
    hid, env = "UID1.utid1", "Login.MicrosoftOnline.com"
    key_id = ""
    ik = INDEX_KEY
    at_fields = dict(home_account_id=hid, environment=env, realm=REALM, client_id=CLIENT_ID,
                     target=TARGET, token_type=TOKEN_TYPE, key_id=key_id)
    account_key = account_storage_key(ik, dict(home_account_id=hid, environment=env, realm=REALM))
    at_key = access_token_storage_key(ik, at_fields)
    ext_fields = dict(at_fields, ext_cache_key=EXT_CACHE_KEY)
    at_ext_key = access_token_storage_key(ik, ext_fields)
    at_obo_key = access_token_storage_key(ik, dict(at_fields, user_assertion_hash=USER_ASSERTION_HASH))
    rt_obo_key = refresh_token_storage_key(
        ik, dict(home_account_id=hid, environment=env, client_id=CLIENT_ID, user_assertion_hash=USER_ASSERTION_HASH))
    rt_client = refresh_token_storage_key(ik, dict(home_account_id=hid, environment=env, client_id=CLIENT_ID))
    rt_family = refresh_token_storage_key(
        ik, dict(home_account_id=hid, environment=env, client_id=CLIENT_ID, family_id=FAMILY_ID))
    idt_key = id_token_storage_key(ik, dict(home_account_id=hid, environment=env, client_id=CLIENT_ID, realm=REALM))
    app_key = app_metadata_storage_key(ik, dict(client_id=CLIENT_ID, environment=env))
    fp = fingerprint(FINGERPRINT_KEY, "access_tokens", at_key)

    # Spot checks of the structure (§4.3): shared prefixes, sizes, canonical forms.
    assert canon_target(TARGET) == CANONICAL_TARGET.encode()
    assert canon_token_type(TOKEN_TYPE) == b"bearer" and canon_token_type("") == b"bearer"
    p = P(ik, hid)
    assert p == D(ik, "account", b"uid1.utid1")
    assert p == P(ik, "uid1.utid1")
    assert account_key == p + D(ik, "account-entry", b"login.microsoftonline.com", b"utid1")
    assert at_key == (p + D(ik, "at-bucket", CLIENT_ID.encode(), b"utid1", b"bearer", b"")
                      + D(ik, "at-entry", b"login.microsoftonline.com", b"mail.read openid user.read"))
    assert rt_family == p + D(ik, "rt-owner", b"family", b"1") + D(ik, "rt-entry", b"login.microsoftonline.com")
    assert rt_client == p + D(ik, "rt-owner", b"client", CLIENT_ID.encode()) + D(ik, "rt-entry",
                                                                                  b"login.microsoftonline.com")
    assert at_ext_key == (p + D(ik, "at-bucket-ext", CLIENT_ID.encode(), b"utid1", b"bearer",
                                 EXT_CACHE_KEY.lower().encode(), b"") + at_key[32:])
    assert access_token_storage_key(ik, dict(at_fields, ext_cache_key="")) == at_key
    # On-behalf-of tokens: the partition replaces the account prefix, the rest of the key is unchanged; the hash is
    # taken exactly (its case matters), and an empty one is no partition.
    o = O(ik, USER_ASSERTION_HASH)
    assert at_obo_key == o + at_key[16:] and rt_obo_key == o + rt_client[16:] and o != p
    assert O(ik, USER_ASSERTION_HASH.lower()) != o
    assert access_token_storage_key(ik, dict(at_fields, user_assertion_hash="")) == at_key
    for k, n in ((account_key, 32), (at_key, 48), (at_ext_key, 48), (at_obo_key, 48), (rt_obo_key, 48), (rt_client, 48), (rt_family, 48), (idt_key, 48), (app_key, 32)):
        assert len(k) == n
    assert all(k[:16] == p for k in (account_key, at_key, rt_client, rt_family, idt_key))
    assert rt_client[32:] == rt_family[32:] and rt_client[16:32] != rt_family[16:32]
    # Length prefixes keep ("a","bc") and ("ab","c") apart.
    assert D(ik, "x", b"a", b"bc") != D(ik, "x", b"ab", b"c")
    # A forbidden scope byte is rejected by a writer.
    for bad in ('User.Read "x"', "a\\b", "caf\u00e9"):
        try:
            canon_target(bad)
            raise AssertionError("forbidden scope byte accepted")
        except InvalidScope:
            pass
    assert len(fp) == 16

    write_vector("blind-index.txt", [
        ("description_text", "index_key / fingerprint_key derivation and the storage key of every kind for fixed "
                             "fields (FORMAT.md §4, §6.4). Mixed-case home_account_id/environment/token_type and a "
                             "non-canonical target exercise the canonical forms of §4.2."),
        ("expect_text", "success"),
        ("data_key", DATA_KEY),
        ("home_account_id_text", hid),
        ("environment_text", env),
        ("realm_text", REALM),
        ("client_id_text", CLIENT_ID),
        ("family_id_text", FAMILY_ID),
        ("target_text", TARGET),
        ("token_type_text", TOKEN_TYPE),
        ("key_id_text", key_id),
        ("ext_cache_key_text", EXT_CACHE_KEY),
        ("user_assertion_hash_text", USER_ASSERTION_HASH),
        ("index_key", ik),
        ("fingerprint_key", FINGERPRINT_KEY),
        ("account_key", account_key),
        ("access_token_key", at_key),
        ("access_token_ext_key", at_ext_key),
        ("access_token_obo_key", at_obo_key),
        ("refresh_token_obo_key", rt_obo_key),
        ("refresh_token_client_key", rt_client),
        ("refresh_token_family_key", rt_family),
        ("id_token_key", idt_key),
        ("app_metadata_key", app_key),
        ("fingerprint_text", fp),
    ], None)
    return at_key


def v_field_maps() -> None:
    # Listed deliberately NOT in canonical order; the encoder must sort names by their UTF-8 bytes:
    #   "B" (0x42) < "a" < "a_b" ('_' = 0x5F) < "aa" < "退" U+9000 (e9 80 80) < "豈" U+F900 (ef a4 80).
    # U+F900 is a CJK compatibility ideograph whose canonical decomposition is U+8C48: a comparison on
    # NFC-normalized strings (e.g. Swift's String `<`) would order it before U+9000; bytewise it comes after.
    # Its value is NFD text ("Zoe" + U+0308), which must be stored unnormalized, unlike "a"'s NFC "Zoë".
    fields = [
        ("aa", "int", 1795353806),
        ("\uf900", "text", "Zoe\u0308"),
        ("a", "text", "Zo\u00eb"),
        ("\u9000", "text", ""),
        ("B", "int", -2),
        ("a_b", "json", {"b": [1, 2], "a": True}),
    ]
    fm = encode_field_map(fields)
    decoded = decode_field_map(fm)
    assert list(decoded) == ["B", "a", "a_b", "aa", "\u9000", "\uf900"]
    assert decoded == {n: (k, v) for n, k, v in fields}
    assert fm[:4] == u32be(6) and fm[4:7] == b"\x02\x00\x01" and fm[7:8] == b"B"
    write_vector("field-map.txt", [
        ("description_text", "field-map encoding of text, integer and JSON fields (FORMAT.md §5.3). Fields are "
                             "listed in arbitrary order; the expected bytes have names in strictly ascending "
                             "bytewise UTF-8 order (not Unicode/NFC collation), values unnormalized."),
        ("expect_text", "success"),
        *field_lines(fields),
    ], fm)

    unordered = [("b", "text", "second"), ("a", "text", "first")]
    fm_bad = encode_field_map_in_order(unordered)
    expect_failure("invalid field map", lambda: decode_field_map(fm_bad))
    write_vector("field-map-unordered.txt", [
        ("description_text", "a two-field map whose names are out of order (\"b\" before \"a\"): a reader must "
                             "reject it (FORMAT.md §5.3). Fields are listed in the order of the bytes."),
        ("expect_text", "invalid field map"),
        *field_lines(unordered),
    ], fm_bad)


def v_compact_field_maps() -> None:
    # Schema 2 (§5.3): known names by id, an unknown name written out (sorting between them by name), an integer, a
    # JSON value, and a secret as segmented text: decoded, as-is and empty segments.
    fields = [
        ("secret", "text", "eyJhbGciOiJub25lIn0.not base64!.." + b64u(bytes(range(40))).decode()),
        ("expires_on", "int", 1795357406),
        ("x_extension", "json", {"n": [1, 2.5]}),
        ("home_account_id", "text", "uid1.utid1"),
        ("environment", "text", "login.microsoftonline.com"),
        ("username", "text", "Zo\u00eb@example.com"),
    ]
    fm = encode_field_map2(fields)
    decoded = decode_field_map2(fm)
    assert list(decoded) == ["environment", "expires_on", "home_account_id", "secret", "username", "x_extension"]
    assert decoded == {n: (k, v) for n, k, v in fields}
    assert fm[:3] == varint(6) + bytes([T_TEXT, ID_OF[b"environment"]])
    assert bytes([T_JSON, 0]) + varint(11) + b"x_extension" in fm
    write_vector("field-map-compact.txt", [
        ("description_text", "a field map of body schema 2 (FORMAT.md §5.3): field ids for the names of the table, an "
                             "unknown name written out (id 0, between the others by name), an integer, a JSON value, "
                             "and the secret as segmented text: its first and last segments stored decoded, the "
                             "middle ones (not base64url, and empty) as they are. Fields are listed in arbitrary order."),
        ("expect_text", "success"),
        *field_lines(fields),
    ], fm)

    # A name that has an id, written out: each field has one encoding, so a reader refuses the other.
    spelled = bytes(varint(1) + bytes([T_TEXT, 0]) + varint(5) + b"realm" + varint(5) + b"utid1")
    expect_failure("invalid field map", lambda: decode_field_map2(spelled))
    write_vector("field-map-compact-spelled-id.txt", [
        ("description_text", "a field map of body schema 2 holding the field realm under id 0 with its name written "
                             "out: realm has id 21, so a reader must reject it (FORMAT.md §5.3)."),
        ("expect_text", "invalid field map"),
        ("field.text.realm_text", "utid1"),
    ], spelled)


def v_headers() -> None:
    # Raw root key, format version 4: one data key sealing with AES-256-GCM (what a store created on a processor
    # with AES-NI names).
    kek = kek_of(ROOT_KEY)
    hdr = build_header(STORE_ID, ROOT_RAW, 0, 0, bytes(16), kek, [(KEY_ID, CREATED_AT, DATA_KEY, NONCE_WRAP_RAW, CIPHER_AES)])
    sid, kind, ops, mem, salt, keys, _, kek2 = parse_header(hdr, raw_root=ROOT_KEY)
    assert (sid, kind, ops, mem, salt, keys, kek2) == (STORE_ID, ROOT_RAW, 0, 0, bytes(16), {KEY_ID: DATA_KEY}, kek)
    assert parse_header.ciphers == {KEY_ID: CIPHER_AES}
    assert len(hdr) == 62 + 85 + 16
    try:
        parse_header(hdr, raw_root=bytes(32))
        raise AssertionError("wrong root key accepted")
    except WrongKey:
        pass
    damaged = bytearray(hdr)
    damaged[20] ^= 1
    try:
        parse_header(bytes(damaged), raw_root=ROOT_KEY)
        raise AssertionError("damaged header accepted")
    except CorruptHeader:
        pass
    # Naming the other cipher for the key (with a checksum that matches) breaks its wrap: the key list is authenticated.
    renamed = bytearray(hdr[: 62 + 85])
    renamed[62 + 12] = CIPHER_XCHACHA
    try:
        parse_header(bytes(renamed) + H(bytes(renamed), 16), raw_root=ROOT_KEY)
        raise AssertionError("a header naming another cipher opened")
    except WrongKey:
        pass
    write_vector("header-raw-key.txt", [
        ("description_text", "a complete header record of format version 4 for a raw root key with one data key (key "
                             "id 1) sealing with AES-256-GCM: KEK derivation, data-key wrapping and checksum "
                             "(FORMAT.md §6.1-§6.3)."),
        ("expect_text", "success"),
        ("read_version_int", 4),
        ("root_key", ROOT_KEY),
        ("store_id", STORE_ID),
        ("key_id_int", KEY_ID),
        ("cipher_int", CIPHER_AES),
        ("data_key", DATA_KEY),
        ("nonce", NONCE_WRAP_RAW),
        ("created_at_int", CREATED_AT),
        ("kek", kek),
    ], hdr)

    # The same store as format version 3 wrote it: the same layout, versions 3 (which the wraps authenticate).
    hdr_v3 = build_header(STORE_ID, ROOT_RAW, 0, 0, bytes(16), kek,
                          [(KEY_ID, CREATED_AT, DATA_KEY, NONCE_WRAP_RAW, CIPHER_AES)], version=3)
    _, _, _, _, _, keys, _, _ = parse_header(hdr_v3, raw_root=ROOT_KEY)
    assert keys == {KEY_ID: DATA_KEY} and parse_header.ciphers == {KEY_ID: CIPHER_AES} and len(hdr_v3) == len(hdr)
    assert hdr_v3 != hdr
    write_vector("header-raw-key-v3.txt", [
        ("description_text", "the header of header-raw-key.txt as format version 3 wrote it: the same layout with "
                             "versions 3, which every wrap authenticates; what an upgrade to version 4 starts from "
                             "(FORMAT.md §6.1, §7)."),
        ("expect_text", "success"),
        ("read_version_int", 3),
        ("root_key", ROOT_KEY),
        ("store_id", STORE_ID),
        ("key_id_int", KEY_ID),
        ("cipher_int", CIPHER_AES),
        ("data_key", DATA_KEY),
        ("nonce", NONCE_WRAP_RAW),
        ("created_at_int", CREATED_AT),
        ("kek", kek),
    ], hdr_v3)

    # The same store as format version 2 wrote it: no cipher byte, the key XChaCha20-Poly1305's. Readers still read it.
    hdr_v2 = build_header(STORE_ID, ROOT_RAW, 0, 0, bytes(16), kek,
                          [(KEY_ID, CREATED_AT, DATA_KEY, NONCE_WRAP_RAW, CIPHER_XCHACHA)], version=2)
    _, _, _, _, _, keys, _, _ = parse_header(hdr_v2, raw_root=ROOT_KEY)
    assert keys == {KEY_ID: DATA_KEY} and parse_header.ciphers == {KEY_ID: CIPHER_XCHACHA} and len(hdr_v2) == 62 + 84 + 16
    write_vector("header-raw-key-v2.txt", [
        ("description_text", "a header record of format version 2 for a raw root key with one data key (key id 1): "
                             "no cipher byte, every key XChaCha20-Poly1305's; what an upgrade to version 3 starts "
                             "from (FORMAT.md §6.1, §7)."),
        ("expect_text", "success"),
        ("read_version_int", 2),
        ("root_key", ROOT_KEY),
        ("store_id", STORE_ID),
        ("key_id_int", KEY_ID),
        ("cipher_int", CIPHER_XCHACHA),
        ("data_key", DATA_KEY),
        ("nonce", NONCE_WRAP_RAW),
        ("created_at_int", CREATED_AT),
        ("kek", kek),
    ], hdr_v2)

    # Two data keys (§6.5, after a rotation's first step): key 2 is the active key, key 1 still roots the index. The
    # rotation converts the store: key 1 seals with XChaCha20-Poly1305, key 2 with AES-256-GCM.
    kek = kek_of(ROOT_KEY)
    hdr2 = build_header(STORE_ID, ROOT_RAW, 0, 0, bytes(16), kek, [
        (KEY_ID, CREATED_AT, DATA_KEY, NONCE_WRAP_RAW, CIPHER_XCHACHA),
        (2, CREATED_AT_2, DATA_KEY_2, NONCE_WRAP_SECOND, CIPHER_AES)])
    sid, kind, ops, mem, salt, keys, _, _ = parse_header(hdr2, raw_root=ROOT_KEY)
    assert keys == {KEY_ID: DATA_KEY, 2: DATA_KEY_2} and len(hdr2) == 62 + 2 * 85 + 16
    assert parse_header.ciphers == {KEY_ID: CIPHER_XCHACHA, 2: CIPHER_AES}
    write_vector("header-two-keys.txt", [
        ("description_text", "a header of format version 4 with two data keys, as a data-key rotation's first step "
                             "leaves it: key 2 is the active key (records are sealed under its record key, with "
                             "AES-256-GCM), key 1 (XChaCha20-Poly1305) still gives the index and fingerprint keys "
                             "(FORMAT.md §6.3-§6.5)."),
        ("expect_text", "success"),
        ("read_version_int", 4),
        ("root_key", ROOT_KEY),
        ("store_id", STORE_ID),
        ("key_id_int", KEY_ID),
        ("created_at_int", CREATED_AT),
        ("cipher_int", CIPHER_XCHACHA),
        ("data_key", DATA_KEY),
        ("nonce", NONCE_WRAP_RAW),
        ("key_id_2_int", 2),
        ("created_at_2_int", CREATED_AT_2),
        ("cipher_2_int", CIPHER_AES),
        ("data_key_2", DATA_KEY_2),
        ("nonce_2", NONCE_WRAP_SECOND),
        ("record_key_2", record_key(DATA_KEY_2)),
        ("index_key", index_key_of(DATA_KEY)),
        ("kek", kek),
    ], hdr2)

    # Passphrase root key (Argon2id13), format version 3, XChaCha20-Poly1305 (a store created on a machine without
    # AES-NI, or asked for it)
    root = argon2id(PASSPHRASE.encode("utf-8"), SALT, OPSLIMIT, MEMLIMIT)
    kek = kek_of(root)
    hdr = build_header(STORE_ID, ROOT_PASSPHRASE, OPSLIMIT, MEMLIMIT, SALT, kek,
                       [(KEY_ID, CREATED_AT, DATA_KEY, NONCE_WRAP_PASSPHRASE, CIPHER_XCHACHA)])
    sid, kind, ops, mem, salt, keys, root2, kek2 = parse_header(hdr, passphrase=PASSPHRASE.encode("utf-8"))
    assert (sid, kind, ops, mem, salt, keys, root2, kek2) == (
        STORE_ID, ROOT_PASSPHRASE, OPSLIMIT, MEMLIMIT, SALT, {KEY_ID: DATA_KEY}, root, kek)
    write_vector("header-passphrase.txt", [
        ("description_text", "a complete header record of format version 4 for a passphrase root key (Argon2id13, "
                             "opslimit 2, memlimit 64 MiB; passphrase taken as its UTF-8 bytes) with one data key, key "
                             "id 1, sealing with XChaCha20-Poly1305 (FORMAT.md §6)."),
        ("expect_text", "success"),
        ("read_version_int", 4),
        ("passphrase_text", PASSPHRASE),
        ("salt", SALT),
        ("opslimit_int", OPSLIMIT),
        ("memlimit_int", MEMLIMIT),
        ("store_id", STORE_ID),
        ("key_id_int", KEY_ID),
        ("cipher_int", CIPHER_XCHACHA),
        ("data_key", DATA_KEY),
        ("nonce", NONCE_WRAP_PASSPHRASE),
        ("created_at_int", CREATED_AT),
        ("root_key", root),
        ("kek", kek),
    ], hdr)


def record_inputs(db: str, lmdb_key: bytes) -> list[tuple[str, object]]:
    return [
        ("store_id", STORE_ID),
        ("data_key", DATA_KEY),
        ("key_id_int", KEY_ID),
        ("database_text", db),
        ("lmdb_key", lmdb_key),
    ]


def v_records(blind_index_at_key: bytes) -> None:
    keys = {KEY_ID: DATA_KEY}

    # ---- AccessToken with summary -------------------------------------------------------------------------
    at_fields = [
        ("cached_at", "int", CREATED_AT),
        ("client_id", "text", CLIENT_ID),
        ("credential_type", "text", "AccessToken"),
        ("environment", "text", ENVIRONMENT),
        ("expires_on", "int", CREATED_AT + 3600),
        ("extended_expires_on", "int", CREATED_AT + 86400),
        ("home_account_id", "text", HOME_ACCOUNT_ID),
        ("realm", "text", REALM),
        ("refresh_on", "int", CREATED_AT + 1800),
        ("secret", "text", AT_SECRET),
        ("target", "text", TARGET),  # the body keeps the entity's target as given; the summary is canonical
        ("token_type", "text", TOKEN_TYPE),
    ]
    at_revision, at_updated_at = 3, 1795353900
    fmap = {n: (k, v) for n, k, v in at_fields}
    check_entity("access_tokens", fmap)
    at_key = access_token_storage_key(INDEX_KEY, {n: v for n, _, v in at_fields})
    assert at_key == blind_index_at_key  # same entity modulo ASCII case -> same key
    summary_plain = encode_summary(summary_fields_of(fmap))
    body_plain = encode_body(at_revision, at_updated_at, at_fields)
    # Schema 2 (§5.3): the JWT-like secret's first and last segments are stored decoded, its middle one ("fake-
    # access-token", 17 characters: no b64u text has 4k + 1) as it is; credential_type is left out.
    assert encode_segmented(AT_SECRET) == (varint(13 << 1) + b64u_canonical_decode(b"eyJ0eXAiOiJKV1QifQ")
                                           + varint(17 << 1 | 1) + b"fake-access-token" + varint(2 << 1) + b"\xb2\x28")
    assert b"credential_type" not in body_plain and bytes([T_SEGMENTED, ID_OF[b"secret"]]) in body_plain
    envelope = seal_record(STORE_ID, "access_tokens", at_key, KEY_ID, DATA_KEY,
                           summary_plain, NONCE_AT_SUMMARY, body_plain, NONCE_AT_BODY)
    S = struct.unpack(">I", envelope[5:9])[0]
    assert S == 24 + len(summary_plain) + 16
    assert envelope[9:33] == NONCE_AT_SUMMARY and envelope[9 + S : 9 + S + 24] == NONCE_AT_BODY

    # Self-check: decrypt back, round-trip the plaintexts, re-derive the storage key from the fields.
    assert open_record(envelope, STORE_ID, "access_tokens", at_key, keys) == (summary_plain, body_plain)
    rev, upd, got, summ = read_record(envelope, STORE_ID, "access_tokens", at_key, keys)
    assert (rev, upd, got) == (at_revision, at_updated_at, stored_fields(fmap))
    assert summ == {"cached_at": ("int", CREATED_AT), "environment": ("text", ENVIRONMENT),
                    "expires_on": ("int", CREATED_AT + 3600), "refresh_on": ("int", CREATED_AT + 1800),
                    "target": ("text", CANONICAL_TARGET)}
    # Any other store, database, key id or summary breaks authentication (§5.2).
    expect_failure("authentication failure",
                   lambda: open_record(envelope, bytes(16), "access_tokens", at_key, keys))
    expect_failure("authentication failure",
                   lambda: open_record(envelope, STORE_ID, "refresh_tokens", at_key, keys))
    expect_failure("authentication failure",
                   lambda: open_record(envelope, STORE_ID, "access_tokens", at_key, {KEY_ID: bytes(32)}))
    # Replacing the summary section by another valid one (other nonce) breaks the body's AD_B.
    other_summary = envelope[:9] + NONCE_AT_BODY + seal(RECORD_KEY, NONCE_AT_BODY, summary_plain,
                                                        ad_base(STORE_ID, "access_tokens", at_key, KEY_ID) + b"\x53")
    swapped = other_summary + envelope[9 + S:]
    assert open_(RECORD_KEY, NONCE_AT_BODY, swapped[9 + 24 : 9 + S], ad_base(STORE_ID, "access_tokens", at_key,
                                                                           KEY_ID) + b"\x53") == summary_plain
    expect_failure("authentication failure",
                   lambda: open_record(swapped, STORE_ID, "access_tokens", at_key, keys))

    write_vector("record-access-token.txt", [
        ("description_text", "an AccessToken record with summary and body, key id 1 (FORMAT.md §5). lmdb_key is "
                             "the access_tokens storage key computed from the body's own fields with the index "
                             "key of data_key (invariant 3). The body keeps the target as given; the summary "
                             "holds its canonical form."),
        ("expect_text", "success"),
        *record_inputs("access_tokens", at_key),
        ("summary_nonce", NONCE_AT_SUMMARY),
        ("body_nonce", NONCE_AT_BODY),
        ("revision_int", at_revision),
        ("updated_at_int", at_updated_at),
        *field_lines(at_fields),
        ("summary_plaintext", summary_plain),
        ("body_plaintext", body_plain),
        ("record_key", RECORD_KEY),
    ], envelope)

    # ---- The same token as its bucket's lone token, under the bucket prefix (§4.3) -------------------------
    lone_key = at_key[:32]
    lone = seal_record(STORE_ID, "access_tokens", lone_key, KEY_ID, DATA_KEY,
                       summary_plain, NONCE_LONE_SUMMARY, body_plain, NONCE_LONE_BODY)
    assert open_record(lone, STORE_ID, "access_tokens", lone_key, keys) == (summary_plain, body_plain)
    # Sealed for one key, opened under the other: authentication failure either way (the AD names the key).
    expect_failure("authentication failure", lambda: open_record(lone, STORE_ID, "access_tokens", at_key, keys))
    expect_failure("authentication failure", lambda: open_record(envelope, STORE_ID, "access_tokens", lone_key, keys))
    write_vector("record-access-token-lone.txt", [
        ("description_text", "the token of record-access-token.txt stored as the only token of its bucket "
                             "(FORMAT.md §4.3): lmdb_key is the 32-byte bucket prefix P(hid) || D(\"at-bucket\", ...) "
                             "of its storage key, and the associated data is built from it. Same plaintexts, "
                             "other nonces."),
        ("expect_text", "success"),
        *record_inputs("access_tokens", lone_key),
        ("summary_nonce", NONCE_LONE_SUMMARY),
        ("body_nonce", NONCE_LONE_BODY),
        ("revision_int", at_revision),
        ("updated_at_int", at_updated_at),
        *field_lines(at_fields),
        ("summary_plaintext", summary_plain),
        ("body_plaintext", body_plain),
        ("record_key", RECORD_KEY),
    ], lone)

    # ---- The same token as version 3 wrote it: body and summary of schema 1, still read (§5.3, §5.4, §7) ----
    v3_summary = encode_field_map(summary_fields_of(fmap))
    v3_body = encode_body_v1(at_revision, at_updated_at, at_fields)
    v3 = seal_record(STORE_ID, "access_tokens", at_key, KEY_ID, DATA_KEY,
                     v3_summary, NONCE_V3_SUMMARY, v3_body, NONCE_V3_BODY)
    rev, upd, got, summ = read_record(v3, STORE_ID, "access_tokens", at_key, keys)
    assert (rev, upd, got) == (at_revision, at_updated_at, fmap) and summ == decode_summary(summary_plain)
    assert len(v3_body) - len(body_plain) > 100
    write_vector("record-access-token-v3.txt", [
        ("description_text", "the token of record-access-token.txt as format version 3 wrote it: body of schema 1 "
                             "(names written out, credential_type included, the secret as text) and a summary "
                             "of schema 1 (a bare field map). Readers of version 4 read it the same (FORMAT.md "
                             "§5.3, §5.4, §7)."),
        ("expect_text", "success"),
        *record_inputs("access_tokens", at_key),
        ("body_schema_int", 1),
        ("summary_nonce", NONCE_V3_SUMMARY),
        ("body_nonce", NONCE_V3_BODY),
        ("revision_int", at_revision),
        ("updated_at_int", at_updated_at),
        *field_lines(at_fields),
        ("summary_plaintext", v3_summary),
        ("body_plaintext", v3_body),
        ("record_key", RECORD_KEY),
    ], v3)

    # ---- Account without summary, with an unknown JSON field -------------------------------------------
    acct_fields = [
        ("authority_type", "text", "MSSTS"),
        ("environment", "text", ENVIRONMENT),
        ("home_account_id", "text", HOME_ACCOUNT_ID),
        ("local_account_id", "text", "00000000-0000-4000-8000-0000000a11ce"),
        ("realm", "text", REALM),
        ("tenant_profiles", "json", {"a": True, "b": [1, 2]}),  # unknown field: preserved as type 0x03
        ("username", "text", "Canary.User@example.com"),
    ]
    acct_revision, acct_updated_at = 1, 1795353900
    afmap = {n: (k, v) for n, k, v in acct_fields}
    check_entity("accounts", afmap)
    assert "tenant_profiles" not in MODEL["accounts"]
    acct_key = account_storage_key(INDEX_KEY, {n: v for n, _, v in acct_fields})
    acct_body = encode_body(acct_revision, acct_updated_at, acct_fields)
    acct_env = seal_record(STORE_ID, "accounts", acct_key, KEY_ID, DATA_KEY, None, None,
                           acct_body, NONCE_ACCOUNT_BODY)
    assert acct_env[5:9] == u32be(0)
    assert open_record(acct_env, STORE_ID, "accounts", acct_key, keys) == (None, acct_body)
    rev, upd, got, summ = read_record(acct_env, STORE_ID, "accounts", acct_key, keys)
    assert (rev, upd, got, summ) == (acct_revision, acct_updated_at, afmap, None)
    assert b'\x03\x00\x0ftenant_profiles\x14{"a":true,"b":[1,2]}' in acct_body  # schema 2: type, id 0, name, value
    write_vector("record-account.txt", [
        ("description_text", "an Account record without summary (S = 0) and with one unknown JSON field, "
                             "tenant_profiles, of type 0x03 (FORMAT.md §5). lmdb_key is the accounts storage key "
                             "computed from the body's own fields."),
        ("expect_text", "success"),
        *record_inputs("accounts", acct_key),
        ("body_nonce", NONCE_ACCOUNT_BODY),
        ("revision_int", acct_revision),
        ("updated_at_int", acct_updated_at),
        *field_lines(acct_fields),
        ("body_plaintext", acct_body),
        ("record_key", RECORD_KEY),
    ], acct_env)

    # ---- Kept MSAL sections: meta / foreign-sections (§5.5) -----------------------------------------------
    # A record without summary in the meta database, under the ASCII key "foreign-sections", whose body holds one
    # type 0x03 field per unknown top-level section of an imported MSAL cache, named as the section is written.
    sections_key = b"foreign-sections"
    sections_fields = [
        ("MySDKState", "json", {"note": "kept", "n": [1, 2.5]}),
        ("UnknownNodes", "json", {"future": {"flags": [True, None]}}),
    ]
    sections_revision, sections_updated_at = 1, 1795354000
    sections_body = encode_body(sections_revision, sections_updated_at, sections_fields)
    sections_env = seal_record(STORE_ID, "meta", sections_key, KEY_ID, DATA_KEY, None, None,
                               sections_body, NONCE_SECTIONS_BODY)
    assert sections_env[5:9] == u32be(0)
    assert open_record(sections_env, STORE_ID, "meta", sections_key, keys) == (None, sections_body)
    rev, upd, got = decode_body(sections_body)
    assert (rev, upd) == (sections_revision, sections_updated_at)
    assert all(kind == "json" for kind, _ in got.values())
    write_vector("record-foreign-sections.txt", [
        ("description_text", "the kept unknown sections of an imported MSAL cache: a record without summary under "
                             "meta / foreign-sections, one type 0x03 field per section (FORMAT.md §5.5)."),
        ("expect_text", "success"),
        *record_inputs("meta", sections_key),
        ("body_nonce", NONCE_SECTIONS_BODY),
        ("revision_int", sections_revision),
        ("updated_at_int", sections_updated_at),
        *field_lines(sections_fields),
        ("body_plaintext", sections_body),
        ("record_key", RECORD_KEY),
    ], sections_env)

    # ---- The access-token cap: meta / access-token-cap (§5.6) --------------------------------------------
    # A record without summary in the meta database, under the ASCII key "access-token-cap", whose body holds one
    # integer field, maximum_count.
    cap_key = b"access-token-cap"
    cap_fields = [("maximum_count", "int", 10000)]
    cap_revision, cap_updated_at = 1, 1795354100
    cap_body = encode_body(cap_revision, cap_updated_at, cap_fields)
    cap_env = seal_record(STORE_ID, "meta", cap_key, KEY_ID, DATA_KEY, None, None, cap_body, NONCE_CAP_BODY)
    assert cap_env[5:9] == u32be(0)
    assert open_record(cap_env, STORE_ID, "meta", cap_key, keys) == (None, cap_body)
    assert read_record(cap_env, STORE_ID, "meta", cap_key, keys)[2] == {"maximum_count": ("int", 10000)}
    write_vector("record-access-token-cap.txt", [
        ("description_text", "the store's cap on access tokens: a record without summary under meta / access-token-cap, "
                             "one integer field maximum_count (FORMAT.md §5.6)."),
        ("expect_text", "success"),
        *record_inputs("meta", cap_key),
        ("body_nonce", NONCE_CAP_BODY),
        ("revision_int", cap_revision),
        ("updated_at_int", cap_updated_at),
        *field_lines(cap_fields),
        ("body_plaintext", cap_body),
        ("record_key", RECORD_KEY),
    ], cap_env)

    # ---- A refresh lease: meta / refresh-lease/<hex of the refresh token's storage key> (§5.7) --------------
    # A record without summary in the meta database; the key names the leased refresh token by its storage key (a
    # keyed hash, §4.3), in lowercase hex. Here the family refresh token of the blind-index fields.
    lease_rt = dict(home_account_id=HOME_ACCOUNT_ID, environment="login.microsoftonline.com", client_id=CLIENT_ID,
                    family_id=FAMILY_ID)
    lease_rt_key = refresh_token_storage_key(INDEX_KEY, lease_rt)
    lease_key = b"refresh-lease/" + lease_rt_key.hex().encode()
    assert len(lease_key) == 14 + 96
    def write_lease_vector(name, description, fields, updated_at, nonce):
        """A lease record (or a refusal record) under lease_key, sealed, read back, and written as vector `name`."""
        revision = 1
        body = encode_body(revision, updated_at, fields)
        envelope = seal_record(STORE_ID, "meta", lease_key, KEY_ID, DATA_KEY, None, None, body, nonce)
        assert envelope[5:9] == u32be(0)
        read_back = read_record(envelope, STORE_ID, "meta", lease_key, keys)[2]
        assert [(name, kind, value) for name, (kind, value) in read_back.items()] == fields
        write_vector(name, [
            ("description_text", description),
            ("expect_text", "success"),
            *record_inputs("meta", lease_key),
            ("home_account_id_text", lease_rt["home_account_id"]),
            ("environment_text", lease_rt["environment"]),
            ("client_id_text", lease_rt["client_id"]),
            ("family_id_text", lease_rt["family_id"]),
            ("refresh_token_key", lease_rt_key),
            ("body_nonce", nonce),
            ("revision_int", revision),
            ("updated_at_int", updated_at),
            *field_lines(fields),
            ("body_plaintext", body),
            ("record_key", RECORD_KEY),
        ], envelope)

    lease_fields = [("expires_at", "int", 1795354130000), ("holder", "text", "5f0c9e2a7b1d4c3e8a6f0b2d4e6c8a1f"),
                    ("pid", "int", 4242)]
    write_lease_vector("record-refresh-lease.txt",
                       "a refresh lease: a record without summary under meta / refresh-lease/ and the lowercase hex of "
                       "the leased refresh token's storage key, fields expires_at, holder and pid (FORMAT.md §5.7).",
                       lease_fields, 1795354100, NONCE_LEASE_BODY)
    # A refusal record under the same key: the lease above after the token endpoint refused the refresh token at
    # revision 3, kept a day so that nobody redeems that revision again (§5.7, step 2).
    write_lease_vector("record-refresh-lease-refused.txt",
                       "a refusal record: the refresh lease under the same key after the token endpoint refused the "
                       "refresh token at revision 3; fields expires_at, holder, pid and refused_revision (FORMAT.md §5.7).",
                       [("expires_at", "int", 1795440530000), ("holder", "text", "5f0c9e2a7b1d4c3e8a6f0b2d4e6c8a1f"),
                        ("pid", "int", 4242), ("refused_revision", "int", 3)], 1795354130, NONCE_REFUSAL_BODY)

    # ---- Failure cases, each derived from the AccessToken envelope with exactly one fault ----------------
    # Tampered: one bit flipped in the middle of the body ciphertext (tag excluded).
    body_ct_start = 9 + S + 24
    body_ct_end = len(envelope) - 16
    flip_at = (body_ct_start + body_ct_end) // 2
    tampered = bytearray(envelope)
    tampered[flip_at] ^= 0x01
    tampered = bytes(tampered)
    expect_failure("authentication failure", lambda: open_record(tampered, STORE_ID, "access_tokens", at_key, keys))
    write_vector("record-tampered.txt", [
        ("description_text", f"the record of record-access-token.txt with bit 0 of byte {flip_at} (in the middle "
                             "of the body ciphertext) flipped: authentication failure (FORMAT.md §9)."),
        ("expect_text", "authentication failure"),
        *record_inputs("access_tokens", at_key),
    ], tampered)

    # Moved: the unmodified envelope presented under another 48-byte key.
    other_key = at_key[:-1] + bytes([at_key[-1] ^ 0x01])
    expect_failure("authentication failure", lambda: open_record(envelope, STORE_ID, "access_tokens", other_key, keys))
    write_vector("record-moved.txt", [
        ("description_text", "the unmodified record of record-access-token.txt read under another key (its own "
                             "key with the last byte XOR 0x01): authentication failure (FORMAT.md §5.2)."),
        ("expect_text", "authentication failure"),
        *record_inputs("access_tokens", other_key),
    ], envelope)

    # ---- The same token sealed with AES-256-GCM (a data key that names cipher 0x02, §6.1) -------------------
    aes = {KEY_ID: CIPHER_AES}
    aes_envelope = seal_record(STORE_ID, "access_tokens", at_key, KEY_ID, DATA_KEY,
                               summary_plain, NONCE_AT_SUMMARY, body_plain, NONCE_AT_BODY, CIPHER_AES)
    assert len(aes_envelope) == len(envelope) and aes_envelope[:33] == envelope[:33]  # same shape, same seeds
    assert open_record(aes_envelope, STORE_ID, "access_tokens", at_key, keys, aes) == (summary_plain, body_plain)
    # Opened with the other cipher, either way: authentication failure (which cipher is the header's to say).
    expect_failure("authentication failure", lambda: open_record(aes_envelope, STORE_ID, "access_tokens", at_key, keys))
    expect_failure("authentication failure", lambda: open_record(envelope, STORE_ID, "access_tokens", at_key, keys, aes))
    # Each seed gives its own key: the body's key is not the summary's.
    assert aes_seal_key(RECORD_KEY, NONCE_AT_SUMMARY) != aes_seal_key(RECORD_KEY, NONCE_AT_BODY)
    write_vector("record-access-token-aes.txt", [
        ("description_text", "the token of record-access-token.txt sealed under a data key that names AES-256-GCM "
                             "(cipher_int 2): each section's 24 bytes in front of its ciphertext seed a one-message "
                             "key, BLAKE2b-256(record key, salt = seed[0..<16], personal = seed[16..<24] || "
                             "\"tcAESgcm\"), used with the all-zero 96-bit nonce (FORMAT.md §1, §5.1)."),
        ("expect_text", "success"),
        *record_inputs("access_tokens", at_key),
        ("cipher_int", CIPHER_AES),
        ("summary_nonce", NONCE_AT_SUMMARY),
        ("body_nonce", NONCE_AT_BODY),
        ("summary_seal_key", aes_seal_key(RECORD_KEY, NONCE_AT_SUMMARY)),
        ("body_seal_key", aes_seal_key(RECORD_KEY, NONCE_AT_BODY)),
        ("revision_int", at_revision),
        ("updated_at_int", at_updated_at),
        *field_lines(at_fields),
        ("summary_plaintext", summary_plain),
        ("body_plaintext", body_plain),
        ("record_key", RECORD_KEY),
    ], aes_envelope)

    aes_tampered = bytearray(aes_envelope)
    aes_tampered[flip_at] ^= 0x01
    aes_tampered = bytes(aes_tampered)
    expect_failure("authentication failure", lambda: open_record(aes_tampered, STORE_ID, "access_tokens", at_key, keys, aes))
    write_vector("record-tampered-aes.txt", [
        ("description_text", f"the record of record-access-token-aes.txt with bit 0 of byte {flip_at} (in the "
                             "middle of the body ciphertext) flipped: authentication failure (FORMAT.md §9)."),
        ("expect_text", "authentication failure"),
        *record_inputs("access_tokens", at_key),
        ("cipher_int", CIPHER_AES),
    ], aes_tampered)

    expect_failure("authentication failure", lambda: open_record(aes_envelope, STORE_ID, "access_tokens", other_key, keys, aes))
    write_vector("record-moved-aes.txt", [
        ("description_text", "the unmodified record of record-access-token-aes.txt read under another key (its own "
                             "key with the last byte XOR 0x01): authentication failure (FORMAT.md §5.2)."),
        ("expect_text", "authentication failure"),
        *record_inputs("access_tokens", other_key),
        ("cipher_int", CIPHER_AES),
    ], aes_envelope)

    # Unknown key id: key id field set to 7, the rest unchanged; the store only has key id 1.
    unknown = envelope[:1] + u32be(7) + envelope[5:]
    expect_failure("unknown key id", lambda: open_record(unknown, STORE_ID, "access_tokens", at_key, keys))
    write_vector("record-unknown-key.txt", [
        ("description_text", "the record of record-access-token.txt with its key id field set to 7; the store "
                             "has only data key 1 (key_id_int): unknown key id (FORMAT.md §5.1, §9)."),
        ("expect_text", "unknown key id"),
        *record_inputs("access_tokens", at_key),
    ], unknown)

    # Bad length: S field set to 39 (below the minimum 40), the rest unchanged (B stays within bounds).
    bad_len = envelope[:5] + u32be(39) + envelope[9:]
    assert B_MIN <= len(bad_len) - 9 - 39 <= B_MAX  # only S is out of range
    expect_failure("length out of range", lambda: open_record(bad_len, STORE_ID, "access_tokens", at_key, keys))
    write_vector("record-bad-length.txt", [
        ("description_text", "the record of record-access-token.txt with its summary length field S set to 39 "
                             "(minimum is 40; the implied body length stays in range): length out of range, "
                             "detected before any decryption (FORMAT.md §5.1)."),
        ("expect_text", "length out of range"),
        *record_inputs("access_tokens", at_key),
    ], bad_len)

    # Bad version: version byte 0x02, the rest unchanged.
    bad_ver = b"\x02" + envelope[1:]
    expect_failure("unsupported version", lambda: open_record(bad_ver, STORE_ID, "access_tokens", at_key, keys))
    write_vector("record-bad-version.txt", [
        ("description_text", "the record of record-access-token.txt with envelope version byte 0x02: "
                             "unsupported envelope version (FORMAT.md §5.1)."),
        ("expect_text", "unsupported version"),
        *record_inputs("access_tokens", at_key),
    ], bad_ver)


# --------------------------------------------------------------------------------------------------------------
# Replay: re-read every written file with the parser and re-run the scenario from the file's contents only
# --------------------------------------------------------------------------------------------------------------


def replay_all() -> None:
    for name in WRITTEN:
        vals, fields, block = parse_vector((OUT_DIR / name).read_text(encoding="utf-8"))
        expect = vals["expect_text"]
        if name == "blind-index.txt":
            dk = vals["data_key"]
            ik = index_key_of(dk)
            f = dict(home_account_id=vals["home_account_id_text"], environment=vals["environment_text"],
                     realm=vals["realm_text"], client_id=vals["client_id_text"], target=vals["target_text"],
                     token_type=vals["token_type_text"], key_id=vals["key_id_text"])
            assert vals["index_key"] == ik and vals["fingerprint_key"] == fingerprint_key_of(dk)
            assert vals["account_key"] == account_storage_key(ik, f)
            assert vals["access_token_key"] == access_token_storage_key(ik, f)
            assert vals["refresh_token_client_key"] == refresh_token_storage_key(ik, {**f, "family_id": ""})
            assert vals["refresh_token_family_key"] == refresh_token_storage_key(
                ik, {**f, "family_id": vals["family_id_text"]})
            assert vals["id_token_key"] == id_token_storage_key(ik, f)
            assert vals["app_metadata_key"] == app_metadata_storage_key(ik, f)
            assert vals["fingerprint_text"] == fingerprint(fingerprint_key_of(dk), "access_tokens",
                                                           vals["access_token_key"])
        elif name == "field-map.txt":
            assert expect == "success" and encode_field_map(fields) == block
            assert decode_field_map(block) == {n: (k, v) for n, k, v in fields}
        elif name == "field-map-compact.txt":
            assert expect == "success" and encode_field_map2(fields) == block
            assert decode_field_map2(block) == {n: (k, v) for n, k, v in fields}
        elif name == "field-map-compact-spelled-id.txt":
            expect_failure(expect, lambda: decode_field_map2(block))
        elif name == "field-map-unordered.txt":
            assert encode_field_map_in_order(fields) == block
            expect_failure(expect, lambda: decode_field_map(block))
        elif name.startswith("header-"):
            if "passphrase_text" in vals:
                root = argon2id(vals["passphrase_text"].encode("utf-8"), vals["salt"], vals["opslimit_int"],
                                vals["memlimit_int"])
                assert root == vals["root_key"]
                kind, ops, mem, salt = ROOT_PASSPHRASE, vals["opslimit_int"], vals["memlimit_int"], vals["salt"]
            else:
                root = vals["root_key"]
                kind, ops, mem, salt = ROOT_RAW, 0, 0, bytes(16)
            kek = kek_of(root)
            assert kek == vals["kek"]
            listed = [(vals["key_id_int"], vals["created_at_int"], vals["data_key"], vals["nonce"], vals["cipher_int"])]
            if "data_key_2" in vals:
                listed.append((vals["key_id_2_int"], vals["created_at_2_int"], vals["data_key_2"], vals["nonce_2"],
                               vals["cipher_2_int"]))
                assert record_key(vals["data_key_2"]) == vals["record_key_2"]
                assert index_key_of(vals["data_key"]) == vals["index_key"]
            hdr = build_header(vals["store_id"], kind, ops, mem, salt, kek, listed, version=vals["read_version_int"])
            assert hdr == block
        elif name.startswith("record-"):
            db, lk, sid = vals["database_text"], vals["lmdb_key"], vals["store_id"]
            keys = {vals["key_id_int"]: vals["data_key"]}
            ciphers = {vals["key_id_int"]: vals.get("cipher_int", CIPHER_XCHACHA)}
            if expect == "success":
                schema = vals.get("body_schema_int", 2)
                rev, upd, got, summ = read_record(block, sid, db, lk, keys, ciphers)
                assert (rev, upd) == (vals["revision_int"], vals["updated_at_int"])
                listed = {n: (k, v) for n, k, v in fields}
                assert got == (listed if schema == 1 else stored_fields(listed))
                assert (encode_body_v1 if schema == 1 else encode_body)(rev, upd, fields) == vals["body_plaintext"]
                assert record_key(vals["data_key"]) == vals["record_key"]
                s_plain, b_plain = open_record(block, sid, db, lk, keys, ciphers)
                assert b_plain == vals["body_plaintext"]
                assert s_plain == vals.get("summary_plaintext")
                if "summary_plaintext" in vals:
                    encode = encode_field_map if schema == 1 else encode_summary
                    assert encode(summary_fields_of(listed)) == s_plain
                # Re-sealing from the file's inputs reproduces the envelope byte for byte.
                assert seal_record(sid, db, lk, vals["key_id_int"], vals["data_key"], vals.get("summary_plaintext"),
                                   vals.get("summary_nonce"), vals["body_plaintext"], vals["body_nonce"],
                                   ciphers[vals["key_id_int"]]) == block
            else:
                expect_failure(expect, lambda: open_record(block, sid, db, lk, keys, ciphers))
        else:
            raise AssertionError(f"no replay for {name}")


def main() -> int:
    note = crosscheck_with_system_libsodium()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    at_key = v_blind_index()
    v_field_maps()
    v_compact_field_maps()
    v_headers()
    v_records(at_key)
    replay_all()
    print(note)
    for name in WRITTEN:
        print(f"wrote {OUT_DIR / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
