"""A seeded synthetic token population, written as an MSAL serialized token cache.

Why: the comparison must feed MSAL Python, msal-extensions and token-cache the *same* tokens, or a difference in
latency could come from the data rather than the engine. The one format all three read is MSAL's unified cache
JSON (the five sections ``AccessToken``, ``RefreshToken``, ``IdToken``, ``Account``, ``AppMetadata``): MSAL
Python deserializes it, msal-extensions keeps exactly this file on disk, and ``cachetool import`` reads it.

The shape follows the lookup corpus of our own Swift benchmarks (Benchmarks/README.md), so figures can be put
side by side. Per account (``TOKENS_PER_ACCOUNT`` = 10 access tokens, so N tokens = N/10 accounts):

- home account id ``<oid>.<home tenant>``; two realms, the home tenant and one guest tenant (both drawn from a
  pool of ``TENANT_POOL`` tenant ids); one ``Account`` entity per realm;
- four clients (the same four for everyone): clients 0 and 1 in family ``"1"`` (FOCI), 2 and 3 not;
- 10 access tokens over the 8 buckets (client x realm): slots 0-7 one per bucket, slots 8 and 9 in buckets drawn
  at random, so a bucket holds 1-3 tokens. Slot ``s`` has 2 or 3 scopes of its own resource
  (``https://res<s>.example/read|write|admin``), so scope sets are disjoint within an account and a one-scope
  request (a *subset* of the stored set) has exactly one right answer;
- one family refresh token (client 0) and one own refresh token each for clients 2 and 3;
- one ID token per (client, realm): 8;
- plus one ``AppMetadata`` per client for the whole cache.

Secrets are JWT-shaped base64url: access tokens 1,400-1,599 bytes, refresh tokens 900-1,099, ID tokens real
unsigned JWTs with the usual claims padded to 950-1,099 bytes. Every access token is usable at ``NOW`` (cached
up to 30 min before, 1-1.5 h lifetime), so each lookup is a hit.

Keys are made by MSAL Python's own ``TokenCache.key_makers``, so MSAL's O(1) exact-key path finds them exactly
as it finds keys it wrote itself, and the file is serialized as ``SerializableTokenCache.serialize`` does
(``json.dumps(..., indent=4)``): msal-extensions would write the same bytes.
"""

from __future__ import annotations

import base64
import json
import random
import uuid
from dataclasses import dataclass, field

import msal

#: The fixed "now" of the population and of every query: 2026-01-01T00:00:00Z. A fixed clock keeps runs
#: comparable (and MSAL's search purges expired tokens relative to the ``now`` it is given).
NOW = 1767225600
ENVIRONMENT = "login.microsoftonline.com"
TOKENS_PER_ACCOUNT = 10
TENANT_POOL = 1009
CLIENT_COUNT = 4
FAMILY_CLIENTS = (0, 1)
AT_SECRET_BYTES = (1400, 1599)
RT_SECRET_BYTES = (900, 1099)
ID_TOKEN_BYTES = (950, 1099)


def _guid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _opaque_jwt(rng: random.Random, length: int) -> str:
    """A JWT-shaped opaque secret of exactly ``length`` characters (three base64url segments)."""
    body = _b64url(rng.randbytes(length))[: length - 2]
    third = len(body) // 3
    return body[:third] + "." + body[third : 2 * third] + "." + body[2 * third :]


def _id_token(rng: random.Random, client: str, realm: str, oid: str, username: str, iat: int) -> str:
    """An unsigned but real-shaped ID token (MSAL decodes its claims when it adds a token response)."""
    header = _b64url(json.dumps({"typ": "JWT", "alg": "RS256", "kid": "benchmark"}).encode())
    claims = {
        "aud": client, "iss": f"https://{ENVIRONMENT}/{realm}/v2.0", "iat": iat, "nbf": iat, "exp": iat + 3600,
        "name": username.split("@")[0], "oid": oid, "preferred_username": username, "sub": _b64url(rng.randbytes(32)),
        "tid": realm, "ver": "2.0",
    }
    payload = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    target = rng.randint(*ID_TOKEN_BYTES)
    signature_length = max(16, target - len(header) - len(payload) - 2)
    signature_length -= signature_length % 4 == 1  # a base64url text of length 4k+1 decodes to nothing valid
    return f"{header}.{payload}.{_b64url(rng.randbytes(signature_length))[:signature_length]}"


def client_info(oid: str, home_tenant: str) -> str:
    return _b64url(json.dumps({"uid": oid, "utid": home_tenant}).encode())


@dataclass(frozen=True)
class StoredToken:
    """One stored access token, with what a silent request for it names."""

    account: int
    slot: int
    home_account_id: str
    oid: str
    home_tenant: str
    username: str
    client_id: str
    client_index: int
    realm: str
    scopes: tuple[str, ...]
    secret: str

    def query(self) -> dict:
        """The query ``acquire_token_silent`` builds for this bucket (client, authority, account)."""
        return {"client_id": self.client_id, "environment": ENVIRONMENT, "realm": self.realm,
                "home_account_id": self.home_account_id}


@dataclass
class Population:
    tokens: int
    seed: int
    cache: dict = field(default_factory=dict)
    access_tokens: list[StoredToken] = field(default_factory=list)
    clients: list[str] = field(default_factory=list)

    def json_text(self) -> str:
        """The file as ``SerializableTokenCache.serialize`` writes it."""
        return json.dumps(self.cache, indent=4)

    def describe(self) -> dict:
        """The distribution, stated in every output so a reader knows what was looked up in."""
        counts = {kind: len(entries) for kind, entries in self.cache.items()}
        return {
            "generator": "Benchmarks/compare/population.py", "seed": self.seed, "now": NOW,
            "access_tokens": self.tokens, "accounts": self.tokens // TOKENS_PER_ACCOUNT,
            "records": counts,
            "realms_per_account": "2 (home tenant + 1 guest tenant, from a pool of %d tenants)" % TENANT_POOL,
            "clients": "%d (clients 0 and 1 in family \"1\", 2 and 3 not)" % CLIENT_COUNT,
            "access_tokens_per_account": "10 over 8 (client, realm) buckets: 1-3 per bucket",
            "scopes_per_access_token": "2-3 of the slot's own resource; lookups ask for 1 of them (a subset)",
            "secret_bytes": {"access_token": list(AT_SECRET_BYTES), "refresh_token": list(RT_SECRET_BYTES),
                             "id_token": list(ID_TOKEN_BYTES)},
            "refresh_tokens_per_account": "3 (family RT of client 0; own RTs of clients 2 and 3)",
            "id_tokens_per_account": "8 (one per client and realm)",
        }

    def sample_queries(self, count: int, seed_offset: int) -> list[StoredToken]:
        """``count`` stored tokens drawn uniformly (with replacement), to look up in that order."""
        rng = random.Random(self.seed * 1000003 + seed_offset)
        return [rng.choice(self.access_tokens) for _ in range(count)]

    def token_response_event(self, token: StoredToken, rng: random.Random) -> dict:
        """The event MSAL's token client hands ``TokenCache.add`` after redeeming a refresh token for ``token``'s
        bucket and scopes: a new access token (same key: it replaces the stored one), refresh token, ID token."""
        family = token.client_index in FAMILY_CLIENTS
        response = {
            "token_type": "Bearer", "scope": " ".join(token.scopes), "expires_in": 3600, "ext_expires_in": 3600,
            "access_token": _opaque_jwt(rng, rng.randint(*AT_SECRET_BYTES)),
            "refresh_token": _opaque_jwt(rng, rng.randint(*RT_SECRET_BYTES)),
            "id_token": _id_token(rng, token.client_id, token.realm, token.oid, token.username, NOW),
            "client_info": client_info(token.oid, token.home_tenant),
        }
        if family:
            response["foci"] = "1"
        return {
            "client_id": token.client_id, "scope": list(token.scopes),
            "token_endpoint": f"https://{ENVIRONMENT}/{token.realm}/oauth2/v2.0/token",
            "environment": ENVIRONMENT, "response": response, "data": {"scope": list(token.scopes)},
            "grant_type": "refresh_token", "params": {},
        }


def generate(tokens: int, seed: int = 20260101) -> Population:
    """Builds the population of ``tokens`` access tokens (a multiple of 10), deterministically from ``seed``."""
    if tokens <= 0 or tokens % TOKENS_PER_ACCOUNT:
        raise ValueError(f"tokens must be a positive multiple of {TOKENS_PER_ACCOUNT}, got {tokens}")
    rng = random.Random(seed)
    makers = msal.TokenCache().key_makers
    kinds = msal.TokenCache.CredentialType
    population = Population(tokens=tokens, seed=seed)
    sections = {"Account": {}, "IdToken": {}, "AccessToken": {}, "RefreshToken": {}, "AppMetadata": {}}
    population.cache = sections
    tenants = [_guid(rng) for _ in range(TENANT_POOL)]
    clients = [_guid(rng) for _ in range(CLIENT_COUNT)]
    population.clients = clients
    for index, client in enumerate(clients):
        entry = {"client_id": client, "environment": ENVIRONMENT}
        if index in FAMILY_CLIENTS:
            entry["family_id"] = "1"
        sections["AppMetadata"][makers[kinds.APP_METADATA](**entry)] = entry

    for account in range(tokens // TOKENS_PER_ACCOUNT):
        oid = _guid(rng)
        home, guest = rng.sample(tenants, 2)
        home_account_id = f"{oid}.{home}"
        username = f"user{account}@contoso{account % 97}.example"
        realms = (home, guest)
        for realm in realms:
            entry = {"home_account_id": home_account_id, "environment": ENVIRONMENT, "realm": realm,
                     "local_account_id": oid, "username": username, "authority_type": "MSSTS"}
            sections["Account"][makers[kinds.ACCOUNT](**entry)] = entry
        first_target: dict[int, str] = {}
        buckets = [(slot % CLIENT_COUNT, slot // CLIENT_COUNT) for slot in range(8)]
        buckets += [buckets[rng.randrange(8)] for _ in range(TOKENS_PER_ACCOUNT - 8)]
        for slot, (client_index, realm_index) in enumerate(buckets):
            scopes = tuple(sorted(f"https://res{slot}.example/{verb}"
                                  for verb in rng.sample(("read", "write", "admin"), rng.choice((2, 3)))))
            cached_at = NOW - rng.randrange(0, 1800)
            expires_on = cached_at + 3600 + rng.randrange(0, 1800)
            secret = _opaque_jwt(rng, rng.randint(*AT_SECRET_BYTES))
            entry = {
                "credential_type": "AccessToken", "secret": secret, "home_account_id": home_account_id,
                "environment": ENVIRONMENT, "client_id": clients[client_index], "target": " ".join(scopes),
                "realm": realms[realm_index], "token_type": "Bearer", "cached_at": str(cached_at),
                "expires_on": str(expires_on), "extended_expires_on": str(expires_on),
            }
            sections["AccessToken"][makers[kinds.ACCESS_TOKEN](**entry)] = entry
            first_target.setdefault(client_index, entry["target"])
            population.access_tokens.append(StoredToken(
                account, slot, home_account_id, oid, home, username, clients[client_index], client_index,
                realms[realm_index], scopes, secret))
        for client_index in (0, 2, 3):
            entry = {
                "credential_type": "RefreshToken", "secret": _opaque_jwt(rng, rng.randint(*RT_SECRET_BYTES)),
                "home_account_id": home_account_id, "environment": ENVIRONMENT, "client_id": clients[client_index],
                "target": first_target.get(client_index, ""), "last_modification_time": str(NOW - 600),
            }
            if client_index in FAMILY_CLIENTS:
                entry["family_id"] = "1"
            sections["RefreshToken"][makers[kinds.REFRESH_TOKEN](**entry)] = entry
        for client_index, client in enumerate(clients):
            for realm in realms:
                entry = {"credential_type": "IdToken",
                         "secret": _id_token(rng, client, realm, oid, username, NOW - 600),
                         "home_account_id": home_account_id, "environment": ENVIRONMENT, "realm": realm,
                         "client_id": client}
                sections["IdToken"][makers[kinds.ID_TOKEN](**entry)] = entry
    return population
