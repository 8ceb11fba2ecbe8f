"""Generates MSAL Python token caches and MSAL Python's own answers to silent requests against them.

Why: token-cache claims to read and write MSAL's "unified token cache" JSON and to answer silent requests the
way an auth client expects. The only convincing proof is the real library: this module makes MSAL Python
itself write the caches (``msal.SerializableTokenCache`` fed through ``TokenCache.add()`` with fabricated token
responses, exactly the events MSAL's own token client emits) and makes MSAL Python itself answer each query,
through its public silent-flow entry points (``acquire_token_silent_with_error`` and ``acquire_token_for_client``).

How the answers are obtained (and why this way): searching the cache by hand with ``TokenCache.search`` would
re-implement the silent flow's decisions (the 5-minute expiry margin, ``refresh_on``, family-of-client-ids
order, the retry under alias hosts) in this file, and a mistake there would be invisible. Instead each query
runs the real ``ClientApplication`` silent path against a fresh copy of the cache, with a stub HTTP client
that never sends anything:

- GET requests (OpenID configuration and instance discovery) are answered with fabricated documents in the
  shapes Microsoft's endpoints return, so the application can be built and knows each cloud's alias hosts;
- the first POST to a token endpoint is recorded (it carries the refresh token MSAL chose to redeem, or the
  client-credentials grant) and then fails as a network error. MSAL then returns the access token it was
  keeping as a fallback (the ``refresh_on`` case), or raises (nothing usable in the cache).

So a query's MSAL answer is: ``hit`` with the access token returned; ``hit`` with ``refresh_recommended`` when
MSAL tried to redeem a refresh token while holding a usable access token; ``refresh`` with the refresh token
it tried to redeem; or ``interaction_required``.

Where MSAL Python and token-cache differ on purpose (Docs/Semantics.md, "Differences from the MSAL SDKs"), the
query is marked with the rule that explains the difference and its expected answer is token-cache's documented
rule, computed here by ``OurRules`` (a small model of Docs/Semantics.md over the imported records). A
difference that no documented rule explains stops the generator: it is either a bug in the model or an
undocumented divergence, and both must be looked at.

Everything is deterministic: fixed seeds, a fixed "now" (``NOW``) patched into MSAL's clock, and a fixed
``PYTHONHASHSEED`` (MSAL walks alias hosts out of a ``set``), so two runs write byte-identical files.

Usage: ``python msal_caches.py --out DIR [--check]``. ``--check`` generates twice, compares the bytes and
runs the self-check (``self_check``); the comparison runner (``msal_proof.py``) calls the same functions.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import filecmp
import json
import os
import random
import sys
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Iterable
from unittest import mock


def ensure_fixed_hash_seed() -> None:
    """Re-executes the interpreter with PYTHONHASHSEED=0 unless it is already set so.

    MSAL keeps each cloud's alias hosts in a ``set`` and tries them in iteration order; string hashing is
    randomized per process, so without a fixed seed the answer to an alias query could change between runs.
    """
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)


import msal  # noqa: E402  (after the helper above, which the entry points call first)
import requests  # noqa: E402  (a dependency of msal; its ConnectionError is what MSAL treats as a network failure)

MSAL_VERSION_REQUIRED = "1.39.0"

#: The fixed "now" of every cache and query: 2026-01-01T00:00:00Z, in Unix seconds.
NOW = 1767225600

#: Seconds of validity a token must have left to be usable (MSAL Python and token-cache agree).
EXPIRY_MARGIN = 300

RESERVED_SCOPES = frozenset({"openid", "profile", "offline_access"})

#: The alias groups of token-cache's built-in table (Sources/TokenCacheModel/Rules/EnvironmentAliases.swift). The
#: instance-discovery stub serves the groups MSAL would learn from the service for the clouds used here.
ALIAS_GROUPS: tuple[tuple[str, ...], ...] = (
    ("login.windows.net", "login.microsoftonline.com", "login.microsoft.com", "sts.windows.net"),
    ("login.partner.microsoftonline.cn", "login.chinacloudapi.cn"),
    ("login.microsoftonline.us", "login.usgovcloudapi.net"),
    ("login-us.microsoftonline.com",),
    ("login.microsoftonline.de",),
    ("login.windows-ppe.net", "sts.windows-ppe.net", "login.microsoft-ppe.com"),
    ("login.sovcloud-identity.fr",),
    ("login.sovcloud-identity.de",),
    ("login.sovcloud-identity.sg",),
)

#: Tenant segments that name no tenant; token-cache then also tries the account's home tenant.
COMMON_REALMS = frozenset({"common", "organizations", "consumers"})

# Public client ids of Microsoft first-party apps that belong to the family of client ids (FOCI).
AZURE_CLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
OFFICE = "d3590ed6-52b3-4102-aeff-aad2292ab01c"
TEAMS = "1fec8e78-bce4-4aaf-ab1b-5451cc387264"  # a family member that never signs in here: membership unknown


def fabricated_id(name: str) -> str:
    """A stable GUID for a fabricated application or tenant name (uuid5, so it names nothing real)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "https://token-cache.invalid/interop/" + name))


NOTES_APP = fabricated_id("app/contoso-notes")  # a third-party public client, not in any family
LEGACY_PORTAL = fabricated_id("app/legacy-portal")  # configured with login.windows.net, not login.microsoftonline.com
DAEMON = fabricated_id("app/inventory-daemon")  # a confidential client using client credentials

SSH_SCOPE = "https://pas.windows.net/CheckMyAccess/Linux/.default"
STORAGE_SCOPE = "https://storage.azure.com/user_impersonation"  # consented by no one: a refresh-only request
MSA_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad"  # the tenant id personal Microsoft accounts carry


@dataclass(frozen=True)
class Cloud:
    """One national cloud: its hosts (the writer's first) and the resources its apps ask for."""

    name: str
    writer_host: str
    alias_host: str
    graph_scopes: tuple[tuple[str, ...], ...]  # an incremental-consent sequence for one app
    arm_scope: str
    vault_scope: str
    app_scopes: tuple[str, ...]  # .default scopes a daemon asks for


PUBLIC = Cloud(
    "public", "login.microsoftonline.com", "login.windows.net",
    (("User.Read",), ("User.Read", "Mail.Read"), ("Calendars.Read",)),
    "https://management.core.windows.net//user_impersonation", "https://vault.azure.net/user_impersonation",
    ("https://graph.microsoft.com/.default", "https://vault.azure.net/.default"),
)
US_GOVERNMENT = Cloud(
    "usgov", "login.microsoftonline.us", "login.usgovcloudapi.net",
    (("https://graph.microsoft.us/User.Read",), ("https://graph.microsoft.us/User.Read", "https://graph.microsoft.us/Mail.Read")),
    "https://management.core.usgovcloudapi.net//user_impersonation", "https://vault.usgovcloudapi.net/user_impersonation",
    ("https://graph.microsoft.us/.default",),
)
CHINA = Cloud(
    "china", "login.chinacloudapi.cn", "login.partner.microsoftonline.cn",
    (("https://microsoftgraph.chinacloudapi.cn/User.Read",),),
    "https://management.core.chinacloudapi.cn//user_impersonation", "https://vault.azure.cn/user_impersonation",
    ("https://microsoftgraph.chinacloudapi.cn/.default",),
)


def alias_group(host: str) -> tuple[str, ...]:
    """The alias group of a host, ASCII-case-insensitively; an unknown host is a group of its own."""
    lowered = host.lower()
    for group in ALIAS_GROUPS:
        if lowered in group:
            return group
    return (lowered,)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unsigned_jwt(claims: dict[str, Any]) -> str:
    """A JWT with an unsigned (alg none) header: MSAL decodes id_token claims without verifying them."""
    header = {"typ": "JWT", "alg": "none"}
    return b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(
        json.dumps(claims, separators=(",", ":"), sort_keys=True).encode()) + "."


# ---------------------------------------------------------------------------------------------------------------
# Cache generation
# ---------------------------------------------------------------------------------------------------------------

FIRST_NAMES = ("Adele", "Alex", "Diego", "Grady", "Isaiah", "Johanna", "Lee", "Lidia", "Megan", "Nestor", "Patti", "Pradeep")
LAST_NAMES = ("Vance", "Wilber", "Siciliani", "Archie", "Langer", "Lauridsen", "Gu", "Holloway", "Bowen", "Wilke", "Fernandez", "Gupta")


@dataclass
class Tenant:
    tid: str
    domain: str


@dataclass
class User:
    """A user of a home tenant; ``hid`` is the home account id MSAL derives from client_info (uid.utid)."""

    oid: str
    tenant: Tenant
    name: str
    upn: str
    cloud: Cloud

    @property
    def hid(self) -> str:
        return f"{self.oid}.{self.tenant.tid}"


@dataclass
class Written:
    """What one token response put in the cache: the generator derives its queries from these."""

    client_id: str
    host: str
    tenant_segment: str
    user: User | None  # None: an app token
    scopes: tuple[str, ...]  # as granted, reserved scopes included
    token_type: str
    key_id: str | None
    state: str
    access_token: str
    # Extra body parameters of the request (an FMI path, forwarded client claims): MSAL keys the access token by
    # the extended cache key they make.
    parameters: tuple[tuple[str, str], ...] = ()


@dataclass
class PlannedEvent:
    time: int
    order: int
    event: dict[str, Any]
    written: Written


class CacheBuilder:
    """Builds one cache: plans token responses on a timeline, then feeds them to MSAL in time order.

    Feeding in time order keeps the cache realistic (a later response is a later insertion), which is also what
    makes MSAL Python's "first inserted wins" differ from token-cache's "most recently cached wins" when an app
    obtains an overlapping scope set later (incremental consent).
    """

    def __init__(self, name: str, seed: int):
        self.name = name
        self.rng = random.Random(seed)
        self.events: list[PlannedEvent] = []
        self.used_times: set[int] = set()
        self.serial = 0

    # --- identifiers and secrets ---

    def guid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tenant(self, domain: str) -> Tenant:
        return Tenant(self.guid(), domain)

    def user(self, tenant: Tenant, cloud: Cloud) -> User:
        first, last = self.rng.choice(FIRST_NAMES), self.rng.choice(LAST_NAMES)
        upn = f"{first}.{last}{self.rng.randint(1, 99)}@{tenant.domain}".lower()
        return User(self.guid(), tenant, f"{first} {last}", upn, cloud)

    def next_serial(self) -> int:
        self.serial += 1
        return self.serial

    def access_token(self, audience: str, tid: str, oid: str | None, scopes: Iterable[str], issued: int, expires: int) -> str:
        """A fabricated access token shaped like an Entra v2 JWT; ``uti`` makes each one unique."""
        claims = {"aud": audience, "iss": f"https://sts.windows.net/{tid}/", "iat": issued, "nbf": issued, "exp": expires,
                  "tid": tid, "scp": " ".join(s for s in scopes if s not in RESERVED_SCOPES), "ver": "2.0",
                  "uti": f"{self.name}-at-{self.next_serial():04d}"}
        if oid:
            claims["oid"] = oid
        return unsigned_jwt(claims)

    def refresh_token(self) -> str:
        """An opaque refresh token in the shape Entra issues ("1.A" + base64url)."""
        return "1.A" + b64url(self.rng.getrandbits(8 * 96).to_bytes(96, "big")) + f"_{self.name}-rt-{self.next_serial():04d}"

    # --- the timeline ---

    def issue_time(self, state: str, expires_in: int, refresh_in: int | None) -> int:
        """When a token in the given state at NOW was issued; times are unique so no two records tie."""
        rng = self.rng
        if state == "valid":
            low = 60
            high = min(expires_in - EXPIRY_MARGIN - 60, (refresh_in or expires_in) - 60)
            time = NOW - rng.randint(low, high)
        elif state == "aging":  # refresh_on has passed, still usable
            time = NOW - rng.randint(refresh_in + 30, expires_in - EXPIRY_MARGIN - 30)
        elif state == "near_expiry":  # under 300 s left: unusable
            time = NOW - (expires_in - rng.randint(30, EXPIRY_MARGIN - 1))
        elif state == "boundary":  # exactly 300 s left: usable
            time = NOW - (expires_in - EXPIRY_MARGIN)
        elif state == "expired":
            time = NOW - expires_in - rng.randint(60, 7 * 86400)
        else:
            raise ValueError(state)
        step = -1 if state in ("valid", "expired") else 0
        while time in self.used_times:
            if step == 0:
                raise AssertionError(f"{self.name}: two boundary-sensitive tokens at {time}")
            time += step
        self.used_times.add(time)
        return time

    def plan(self, event: dict[str, Any], time: int, written: Written) -> None:
        self.events.append(PlannedEvent(time, len(self.events), event, written))

    # --- token responses ---

    def user_response(self, cloud: Cloud, user: User, client_id: str, scopes: tuple[str, ...], *, host: str | None = None,
                      tenant_segment: str | None = None, resource_tenant: Tenant | None = None, foci: bool = False,
                      state: str = "valid", token_type: str = "Bearer", key_id: str | None = None,
                      with_refresh_in: bool | None = None, grant_type: str = "authorization_code",
                      after: int | None = None) -> int:
        """Plans a user's token response as the token endpoint returns it and MSAL's token client reports it.

        ``tenant_segment`` is the authority's tenant path segment (``common``, ``organizations`` or a tenant id):
        MSAL Python stores it as the realm. ``resource_tenant`` is the tenant that issued the tokens (a guest
        tenant for a guest sign-in); the id_token's ``tid`` and ``oid`` come from it, client_info always names
        the home tenant. Returns the issue time.
        """
        rng = self.rng
        host = host or cloud.writer_host
        resource_tenant = resource_tenant or user.tenant
        tenant_segment = tenant_segment or resource_tenant.tid
        expires_in = rng.choice((3599, 4169, 4799, 5399)) if token_type == "Bearer" else 3599
        if with_refresh_in is None:
            with_refresh_in = state == "aging" or rng.random() < 0.3
        refresh_in = expires_in // 2 if with_refresh_in else None
        time = self.issue_time(state, expires_in, refresh_in) if after is None else after
        # Entra adds the OpenID Connect scopes to the granted scopes of a Graph token (short-form scopes, or the
        # graph.microsoft.us resource), not to tokens for other resources.
        is_graph = not scopes[0].startswith("https://") or scopes[0].startswith("https://graph")
        granted = tuple(scopes) + (("openid", "profile", "email") if is_graph else ())
        guest_oid = user.oid if resource_tenant is user.tenant else str(uuid.uuid5(uuid.UUID(user.oid), resource_tenant.tid))
        id_claims = {
            "aud": client_id, "iss": f"https://{host}/{resource_tenant.tid}/v2.0", "iat": time, "nbf": time,
            "exp": time + 3600, "name": user.name, "oid": guest_oid, "preferred_username": user.upn,
            "sub": b64url(uuid.uuid5(uuid.UUID(guest_oid), client_id).bytes), "tid": resource_tenant.tid, "ver": "2.0",
            "rh": f"0.A{self.next_serial():04d}.", "uti": b64url(rng.getrandbits(128).to_bytes(16, "big")),
        }
        audience = scopes[0].rsplit("/", 1)[0] if scopes[0].startswith("https://") else "00000003-0000-0000-c000-000000000000"
        access_token = self.access_token(audience, resource_tenant.tid, guest_oid, granted, time, time + expires_in)
        response: dict[str, Any] = {
            "token_type": token_type, "scope": " ".join(granted), "expires_in": expires_in, "ext_expires_in": expires_in,
            "access_token": access_token, "refresh_token": self.refresh_token(), "id_token": unsigned_jwt(id_claims),
            "client_info": b64url(json.dumps({"uid": user.oid, "utid": user.tenant.tid}, separators=(",", ":")).encode()),
        }
        if refresh_in:
            response["refresh_in"] = refresh_in
        if foci:
            response["foci"] = "1"
        data: dict[str, Any] = {"scope": list(scopes)}
        if key_id:
            data["key_id"] = key_id
            if token_type == "ssh-cert":
                data["token_type"] = "ssh-cert"
                data["req_cnf"] = json.dumps({"kty": "RSA", "n": b64url(rng.getrandbits(512).to_bytes(64, "big")), "e": "AQAB", "kid": key_id})
        event = {
            "client_id": client_id, "scope": list(granted), "grant_type": grant_type,
            "token_endpoint": f"https://{host}/{tenant_segment}/oauth2/v2.0/token", "environment": host,
            "response": response, "params": {}, "data": data,
        }
        self.plan(event, time, Written(client_id, host, tenant_segment, user, granted, token_type, key_id, state, access_token))
        return time

    def app_response(self, cloud: Cloud, tenant: Tenant, scope: str, *, host: str | None = None, state: str = "valid",
                     parameters: dict[str, str] | None = None) -> None:
        """Plans a client-credentials response: an access token with no account, refresh token or id_token.

        ``parameters`` are extra body parameters of the request (``fmi_path``, ``client_claims``): MSAL stores the
        token with the extended cache key they make, as ``acquire_token_for_client(fmi_path=…)`` does."""
        host = host or cloud.writer_host
        expires_in = self.rng.choice((3599, 86399))
        time = self.issue_time(state, expires_in, None)
        access_token = self.access_token(scope.rsplit("/", 1)[0], tenant.tid, None, [scope], time, time + expires_in)
        event = {
            "client_id": DAEMON, "scope": [scope], "grant_type": "client_credentials",
            "token_endpoint": f"https://{host}/{tenant.tid}/oauth2/v2.0/token", "environment": host,
            "response": {"token_type": "Bearer", "expires_in": expires_in, "ext_expires_in": expires_in,
                         "access_token": access_token},
            "params": {}, "data": {"scope": [scope], **(parameters or {})},
        }
        self.plan(event, time, Written(DAEMON, host, tenant.tid, None, (scope,), "Bearer", None, state, access_token,
                                       tuple(sorted((parameters or {}).items()))))

    def build(self) -> tuple[str, list[Written]]:
        """Adds every planned response to a new MSAL cache in time order; returns MSAL's serialization."""
        cache = msal.SerializableTokenCache()
        written = []
        for planned in sorted(self.events, key=lambda e: (e.time, e.order)):
            cache.add(planned.event, now=planned.time)
            written.append(planned.written)
        return cache.serialize(), written


def random_state(rng: random.Random) -> str:
    return rng.choices(("valid", "aging", "near_expiry", "expired"), weights=(60, 15, 10, 15))[0]


def populate(builder: CacheBuilder, public_users: int, sovereign_users: int) -> None:
    """Plans a realistic mix for one cache: every kind of entity the interop proof needs appears at least once.

    Public cloud: users of two organizations and one personal account; FOCI apps (Azure CLI, Office) sharing a
    family refresh token; a third-party app with incremental consent (overlapping access tokens); guest sign-ins
    into the other organization; SSH certificates and PoP tokens bound to key ids; an app configured with the
    login.windows.net alias; client-credential tokens. Sovereign clouds: US Government and China users, China's
    written under the older login.chinacloudapi.cn host.
    """
    b, rng = builder, builder.rng
    contoso, fabrikam = b.tenant("contoso.onmicrosoft.com"), b.tenant("fabrikam.onmicrosoft.com")
    msa = Tenant(MSA_TENANT, "outlook.com")
    users = [b.user(contoso if i % 3 else fabrikam, PUBLIC) for i in range(public_users)]
    for index, user in enumerate(users):
        other = fabrikam if user.tenant is contoso else contoso
        # Azure CLI signs in to the home tenant for ARM (a family app).
        b.user_response(PUBLIC, user, AZURE_CLI, (PUBLIC.arm_scope,), foci=True, state=random_state(rng))
        # Office through /common: MSAL Python stores realm "common".
        b.user_response(PUBLIC, user, OFFICE, PUBLIC.graph_scopes[0] + ("Files.Read",), tenant_segment="common", foci=True,
                        state=random_state(rng))
        # A third-party app, incremental consent: User.Read first, User.Read + Mail.Read later (overlapping tokens).
        first = b.user_response(PUBLIC, user, NOTES_APP, PUBLIC.graph_scopes[0], state="valid", with_refresh_in=False)
        later = first + rng.randint(5, 50)
        if later not in b.used_times:
            b.used_times.add(later)
            b.user_response(PUBLIC, user, NOTES_APP, PUBLIC.graph_scopes[1], after=later, with_refresh_in=False)
        if index % 2 == 0:  # a guest sign-in into the other organization: a second realm for the same account
            b.user_response(PUBLIC, user, AZURE_CLI, (PUBLIC.arm_scope,), resource_tenant=other, foci=True, state=random_state(rng))
        if index % 3 == 0:  # az ssh: an SSH certificate bound to a key id
            b.user_response(PUBLIC, user, AZURE_CLI, (SSH_SCOPE,), foci=True, token_type="ssh-cert",
                            key_id=f"ssh-key-{b.guid()[:8]}", state="valid", grant_type="refresh_token")
        if index % 3 == 1:  # a PoP token for Graph, bound to a key thumbprint
            b.user_response(PUBLIC, user, NOTES_APP, ("Files.Read",), token_type="pop",
                            key_id=b64url(rng.getrandbits(256).to_bytes(32, "big")), state="valid", with_refresh_in=False)
        if index % 4 == 1:  # an app configured with the login.windows.net alias
            b.user_response(PUBLIC, user, LEGACY_PORTAL, (PUBLIC.vault_scope,), host=PUBLIC.alias_host, state=random_state(rng))
    # The exact boundary: 300 s left is still usable, for everyone.
    b.user_response(PUBLIC, users[0], NOTES_APP, PUBLIC.graph_scopes[2], state="boundary", with_refresh_in=False)
    # A personal Microsoft account through /consumers.
    personal = b.user(msa, PUBLIC)
    b.user_response(PUBLIC, personal, OFFICE, ("Files.Read",), tenant_segment="consumers", foci=True, state="valid")
    # Client credentials: no account, no refresh token.
    for scope in PUBLIC.app_scopes:
        b.app_response(PUBLIC, contoso, scope, state="valid")
    b.app_response(PUBLIC, fabrikam, PUBLIC.app_scopes[0], state=rng.choice(("valid", "expired")))
    # Federated managed identity paths and forwarded client claims: tokens of the same client, tenant and scope that
    # MSAL keeps apart by their extended cache key; in both tenants, two paths each, one path with claims too.
    for tenant in (contoso, fabrikam):
        for agent in ("agent-1", "agent-2"):
            b.app_response(PUBLIC, tenant, PUBLIC.app_scopes[0], state=rng.choice(("valid", "valid", "expired")),
                           parameters={"fmi_path": f"Tenants/{tenant.domain}/Agents/{agent}"})
        b.app_response(PUBLIC, tenant, PUBLIC.app_scopes[0], state="valid",
                       parameters={"fmi_path": f"Tenants/{tenant.domain}/Agents/agent-1",
                                   "client_claims": json.dumps({"xms_az_claim": tenant.domain})})
    # Sovereign clouds.
    agency = b.tenant("agency.onmicrosoft.us")
    partner = b.tenant("partner.partner.onmschina.cn")
    for index in range(sovereign_users):
        gov = b.user(agency, US_GOVERNMENT)
        b.user_response(US_GOVERNMENT, gov, AZURE_CLI, (US_GOVERNMENT.arm_scope,), foci=True, state=random_state(rng))
        b.user_response(US_GOVERNMENT, gov, NOTES_APP, US_GOVERNMENT.graph_scopes[index % 2], state=random_state(rng))
        cn = b.user(partner, CHINA)
        b.user_response(CHINA, cn, AZURE_CLI, (CHINA.arm_scope,), foci=True, state=random_state(rng))
        b.user_response(CHINA, cn, NOTES_APP, CHINA.graph_scopes[0], host=CHINA.alias_host, state=random_state(rng))
    b.app_response(US_GOVERNMENT, agency, US_GOVERNMENT.app_scopes[0], state="valid")
    b.app_response(CHINA, partner, CHINA.app_scopes[0], host=CHINA.alias_host, state="valid")


#: The caches written: name → (seed, public users, users per sovereign cloud).
CACHES: dict[str, tuple[int, int, int]] = {
    "small": (101, 3, 1),
    "medium": (202, 6, 2),
    "large": (303, 12, 3),
}


# ---------------------------------------------------------------------------------------------------------------
# Queries and answers
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Query:
    """A silent request: what ``cachetool lookup`` and MSAL's silent flow are both asked."""

    client_id: str
    home_account_id: str | None  # None: an app (client-credentials) request
    environment: str
    realm: str
    scopes: tuple[str, ...]
    token_type: str | None = None  # None: Bearer
    key_id: str | None = None
    # Extra body parameters (name, value), sorted: `acquire_token_for_client(fmi_path=…, forwarded_client_claims=…)`
    # in MSAL, `--parameter name=value` in cachetool. MSAL's names: fmi_path, client_claims.
    parameters: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Answer:
    outcome: str  # hit | refresh | interaction_required
    access_token: str | None = None
    refresh_token: str | None = None  # only where MSAL reveals it: outcome refresh, or a hit with refresh_recommended
    refresh_recommended: bool = False

    def describe(self, names: dict[str, str]) -> str:
        parts = [self.outcome + (" (refresh recommended)" if self.refresh_recommended else "")]
        if self.access_token:
            parts.append("access token " + names.get(self.access_token, secret_label(self.access_token)))
        if self.refresh_token:
            parts.append("refresh token " + names.get(self.refresh_token, secret_label(self.refresh_token)))
        return ", ".join(parts)


class NoNetwork(requests.exceptions.ConnectionError):
    """Raised by the stub for every token request: MSAL treats it as a network failure."""


class StubHttpClient:
    """An HTTP client that serves discovery documents and records, then refuses, every token request."""

    def __init__(self) -> None:
        self.token_requests: list[dict[str, Any]] = []

    class Response:
        def __init__(self, status_code: int, payload: Any):
            self.status_code = status_code
            self.text = json.dumps(payload)
            self.headers: dict[str, str] = {}

        def raise_for_status(self) -> None:
            if self.status_code >= 400:
                raise requests.exceptions.HTTPError(self.text)

    def get(self, url: str, params: dict[str, Any] | None = None, headers: Any = None, **kwargs: Any) -> "StubHttpClient.Response":
        from urllib.parse import urlparse
        parsed = urlparse(url)
        if parsed.path.endswith("/discovery/instance"):
            return self.Response(200, {
                "tenant_discovery_endpoint": "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration",
                "api-version": "1.1",
                "metadata": [{"preferred_network": group[1] if len(group) > 1 and group[0] == "login.windows.net" else group[0],
                              "preferred_cache": group[0], "aliases": list(group)} for group in ALIAS_GROUPS],
            })
        if parsed.path.endswith("/.well-known/openid-configuration"):
            tenant = parsed.path.split("/")[1]
            base = f"https://{parsed.hostname}/{tenant}"
            return self.Response(200, {
                "issuer": f"https://{parsed.hostname}/{{tenantid}}/v2.0",
                "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                "token_endpoint": f"{base}/oauth2/v2.0/token",
                "device_authorization_endpoint": f"{base}/oauth2/v2.0/devicecode",
            })
        return self.Response(404, {"error": "not_found"})

    def post(self, url: str, params: Any = None, data: Any = None, headers: Any = None, **kwargs: Any) -> Any:
        self.token_requests.append(dict(data or {}))
        raise NoNetwork("the interop generator never sends token requests")

    def close(self) -> None:
        pass


def msal_answer(serialized_cache: str, query: Query) -> Answer:
    """MSAL Python's own answer: its silent flow against a fresh copy of the cache, at NOW, with no network.

    A fresh copy each time because MSAL's search deletes expired access tokens as it goes.
    """
    cache = msal.SerializableTokenCache()
    cache.deserialize(serialized_cache)
    http = StubHttpClient()
    authority = f"https://{query.environment}/{query.realm}"
    data: dict[str, Any] = {}
    if query.key_id:
        data["key_id"] = query.key_id
        if query.token_type == "ssh-cert":
            data["token_type"] = "ssh-cert"
            data["req_cnf"] = json.dumps({"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": query.key_id})
    result: dict[str, Any] | None
    raised = False
    with mock.patch("time.time", return_value=float(NOW)):
        if query.home_account_id is None:
            app = msal.ConfidentialClientApplication(query.client_id, client_credential="fabricated-client-secret",
                                                     authority=authority, http_client=http, token_cache=cache)
            extra = dict(query.parameters)
            keywords: dict[str, Any] = {}
            if "fmi_path" in extra:
                keywords["fmi_path"] = extra.pop("fmi_path")
            if "client_claims" in extra:
                keywords["forwarded_client_claims"] = extra.pop("client_claims")
            data.update(extra)
            if data:
                keywords["data"] = data
            try:
                result = app.acquire_token_for_client(list(query.scopes), **keywords)
            except NoNetwork:
                result, raised = None, True
        else:
            app = msal.PublicClientApplication(query.client_id, authority=authority, http_client=http, token_cache=cache)
            account = {"home_account_id": query.home_account_id, "environment": query.environment, "realm": query.realm,
                       "authority_type": "MSSTS", "local_account_id": query.home_account_id.split(".")[0],
                       "username": "", "account_source": "authorization_code"}
            try:
                result = app.acquire_token_silent_with_error(list(query.scopes), account, data=data)
            except NoNetwork:
                result, raised = None, True
    redeemed = [r.get("refresh_token") for r in http.token_requests if r.get("grant_type") == "refresh_token"]
    first_redeemed = redeemed[0] if redeemed else None
    if result and "access_token" in result:
        assert not raised
        return Answer("hit", result["access_token"], first_redeemed, refresh_recommended=first_redeemed is not None)
    if first_redeemed:
        return Answer("refresh", None, first_redeemed)
    if result and "error" in result:
        raise AssertionError(f"MSAL answered with an error without any token request: {result}")
    return Answer("interaction_required")


def ext_cache_key(parameters: Iterable[tuple[str, str]]) -> str:
    """The extended cache key of a request with these extra parameters, by MSAL Python's own function ("" for none)."""
    return msal.token_cache._compute_ext_cache_key(dict(parameters))


class OurRules:
    """token-cache's documented lookup rules (Docs/Semantics.md), applied to a cache as `cachetool import` keeps it.

    Used only where MSAL Python differs on purpose, to state the answer token-cache must give instead, and to
    classify each difference. Field comparisons are ASCII-case-insensitive, scopes are a case-insensitive subset
    with openid/profile/offline_access dropped from the request, environments match by alias group, a
    common/organizations/consumers realm also tries the home tenant, the newest ``cached_at`` wins among several
    usable tokens, and refresh tokens follow the family rules with the newest ``last_modification_time``.
    """

    def __init__(self, cache: dict[str, Any]):
        self.access_tokens = list(cache.get("AccessToken", {}).values())
        self.refresh_tokens = list(cache.get("RefreshToken", {}).values())
        self.app_metadata = list(cache.get("AppMetadata", {}).values())

    @staticmethod
    def same(a: str | None, b: str | None) -> bool:
        return (a or "").lower() == (b or "").lower()

    @staticmethod
    def scope_set(scopes: Iterable[str]) -> set[str]:
        return {s.lower() for s in scopes}

    def candidates(self, query: Query, realm: str) -> list[dict[str, Any]]:
        """Usable access tokens of the query's bucket in one realm, best first."""
        wanted = self.scope_set(query.scopes) - RESERVED_SCOPES
        group = alias_group(query.environment)
        found = []
        for at in self.access_tokens:
            if not (self.same(at.get("home_account_id"), query.home_account_id) and self.same(at.get("client_id"), query.client_id)
                    and self.same(at.get("realm"), realm) and at.get("environment", "").lower() in group
                    and self.same(at.get("token_type") or "bearer", query.token_type or "bearer")
                    and (at.get("key_id") or "") == (query.key_id or "")
                    and (at.get("ext_cache_key") or "") == ext_cache_key(query.parameters)
                    and wanted <= self.scope_set(at.get("target", "").split())):
                continue
            if int(at["cached_at"]) > NOW or int(at["expires_on"]) - NOW < EXPIRY_MARGIN:
                continue
            found.append(at)
        found.sort(key=lambda at: (int(at["cached_at"]), int(at["expires_on"])), reverse=True)
        if len(found) > 1:
            top, second = found[0], found[1]
            assert (top["cached_at"], top["expires_on"]) != (second["cached_at"], second["expires_on"]), "tie"
        return found

    def realms(self, query: Query) -> list[str]:
        realms = [query.realm]
        if query.realm.lower() in COMMON_REALMS and query.home_account_id and "." in query.home_account_id:
            realms.append(query.home_account_id.rsplit(".", 1)[1])
        return realms

    def membership(self, query: Query) -> str | None:
        """The family id of the client ("" when known not to be a member), or None when unknown."""
        group = alias_group(query.environment)
        own = [m for m in self.app_metadata if self.same(m.get("client_id"), query.client_id)
               and self.same(m.get("environment"), query.environment)]
        aliased = own or [m for m in self.app_metadata if self.same(m.get("client_id"), query.client_id)
                          and m.get("environment", "").lower() in group]
        families = {m.get("family_id") or "" for m in aliased}
        assert len(families) <= 1, f"app metadata disagrees across aliases: {families}"
        return families.pop() if families else None

    def refresh_token(self, query: Query) -> dict[str, Any] | None:
        if not query.home_account_id:
            return None
        group = alias_group(query.environment)
        mine = [rt for rt in self.refresh_tokens if self.same(rt.get("home_account_id"), query.home_account_id)
                and rt.get("environment", "").lower() in group]
        family = self.membership(query)
        owners = ["1" if family is None else family] if family != "" else []
        newest = lambda tokens: max(tokens, key=lambda rt: int(rt.get("last_modification_time", "0")), default=None)  # noqa: E731
        for owner in owners:
            token = newest([rt for rt in mine if (rt.get("family_id") or "") == owner])
            if token:
                return token
        return newest([rt for rt in mine if not rt.get("family_id") and self.same(rt.get("client_id"), query.client_id)])

    def answer(self, query: Query) -> tuple[Answer, dict[str, Any]]:
        """The answer and the facts behind it (candidates, realm, chosen records) for explaining differences."""
        facts: dict[str, Any] = {"candidates": [], "realm": None}
        refresh = self.refresh_token(query)
        for realm in self.realms(query):
            found = self.candidates(query, realm)
            if found:
                chosen = found[0]
                facts.update(candidates=found, realm=realm, access_token=chosen, refresh_token=refresh)
                aging = "refresh_on" in chosen and int(chosen["refresh_on"]) <= NOW
                return Answer("hit", chosen["secret"], refresh["secret"] if aging and refresh else None, aging), facts
        facts["refresh_token"] = refresh
        if refresh:
            return Answer("refresh", None, refresh["secret"]), facts
        return Answer("interaction_required"), facts


#: The deliberate differences, as the comparison states them.
DIFFERENCES = {
    "case_insensitive_scopes": "MSAL Python compares scopes case-sensitively; token-cache ignores ASCII case",
    "newest_cached_wins": "with several usable tokens MSAL Python returns the first inserted; token-cache the most recently cached",
    "token_type_filtered": "MSAL Python does not filter access tokens by token type; token-cache never returns a PoP/SSH token to a Bearer request",
    "alias_group_lookup": "MSAL Python searches the configured host first and another alias only if it holds a refresh token; token-cache matches the whole alias group at once",
    "home_tenant_for_common": "MSAL Python looks up a common/organizations/consumers realm literally; token-cache then also tries the account's home tenant",
}


def explain(query: Query, msal: Answer, ours: Answer, facts: dict[str, Any], cache: dict[str, Any]) -> list[str]:
    """The documented differences that account for MSAL's answer differing from ours; empty if none does."""
    reasons = []
    msal_at = next((at for at in cache.get("AccessToken", {}).values() if at["secret"] == msal.access_token), None)
    if msal_at and not OurRules.same(msal_at.get("token_type") or "bearer", query.token_type or "bearer"):
        reasons.append("token_type_filtered")
    chosen = facts.get("access_token")
    if chosen and msal.access_token != chosen["secret"]:
        exact = set(query.scopes) <= set(chosen.get("target", "").split())
        if not exact:
            reasons.append("case_insensitive_scopes")
        if len(facts["candidates"]) > 1 and msal.access_token in {c["secret"] for c in facts["candidates"]}:
            reasons.append("newest_cached_wins")
        if chosen.get("environment", "").lower() != query.environment.lower():
            reasons.append("alias_group_lookup")
        if facts["realm"] != query.realm:
            reasons.append("home_tenant_for_common")
    rt = facts.get("refresh_token")
    if ours.refresh_token != msal.refresh_token and rt and rt.get("environment", "").lower() != query.environment.lower():
        reasons.append("alias_group_lookup")
    return sorted(set(reasons))


def derive_queries(written: list[Written], rng: random.Random, limit: int) -> list[tuple[str, Query]]:
    """Queries in several shapes for each stored token, plus requests nothing in the cache can answer."""
    queries: list[tuple[str, Query]] = []
    seen: set[Query] = set()

    def add(kind: str, query: Query) -> None:
        if query not in seen:
            seen.add(query)
            queries.append((kind, query))

    for w in written:
        requested = tuple(s for s in w.scopes if s not in RESERVED_SCOPES and s != "email") or w.scopes
        hid = w.user.hid if w.user else None
        token_type = None if w.token_type == "Bearer" else w.token_type
        base = Query(w.client_id, hid, w.host, w.tenant_segment, requested, token_type, w.key_id, w.parameters)
        add("exact", base)
        if w.parameters:
            # Another path, no parameters at all, and the path without its claims: never this token.
            path = dict(w.parameters).get("fmi_path", "")
            add("other_fmi_path", dataclasses.replace(base, parameters=(("fmi_path", path + "-other"),)))
            add("without_parameters", dataclasses.replace(base, parameters=()))
            if len(w.parameters) > 1:
                add("fmi_path_without_claims", dataclasses.replace(base, parameters=(("fmi_path", path),)))
        if len(requested) > 1:
            add("subset", dataclasses.replace(base, scopes=(rng.choice(requested),)))
        changed = tuple(s.lower() if s != s.lower() else s.upper() for s in requested)
        add("scope_case", dataclasses.replace(base, scopes=changed))
        others = [h for h in alias_group(w.host) if h != w.host]
        if others:
            add("alias_host", dataclasses.replace(base, environment=rng.choice(others)))
        add("unconsented_scope", dataclasses.replace(base, scopes=(STORAGE_SCOPE,), token_type=None, key_id=None))
        if w.key_id:
            add("bearer_for_keyed", dataclasses.replace(base, token_type=None, key_id=None))
            add("wrong_key_id", dataclasses.replace(base, key_id=w.key_id + "-rotated"))
        if w.user and w.tenant_segment.lower() not in COMMON_REALMS:
            add("organizations_realm", dataclasses.replace(base, realm="organizations"))
        if w.user and w.tenant_segment.lower() in COMMON_REALMS:
            add("home_tenant_realm", dataclasses.replace(base, realm=w.user.tenant.tid))
        if w.user:
            add("family_unknown_client", dataclasses.replace(base, client_id=TEAMS, scopes=requested[:1], token_type=None, key_id=None))
            add("unknown_account", dataclasses.replace(base, home_account_id=f"{uuid.UUID(int=rng.getrandbits(128), version=4)}.{w.user.tenant.tid}"))
        else:
            add("app_other_tenant", dataclasses.replace(base, realm=str(uuid.UUID(int=rng.getrandbits(128), version=4))))
    if len(queries) > limit:
        # Every query about an extended cache key is kept (they are few, and each partition must be proven); the
        # rest are sampled.
        extended = [i for i, (kind, query) in enumerate(queries) if query.parameters or kind in EXTENDED_KEY_QUERY_KINDS]
        others = [i for i in range(len(queries)) if i not in set(extended)]
        keep = sorted(extended + rng.sample(others, max(0, limit - len(extended))))
        queries = [queries[i] for i in keep]
    return queries


#: The query kinds that probe an extended cache key's partition from outside it.
EXTENDED_KEY_QUERY_KINDS = ("other_fmi_path", "without_parameters", "fmi_path_without_claims")


def generate_cache(name: str) -> tuple[str, list[dict[str, Any]]]:
    """One cache's MSAL serialization and its queries, each with MSAL's answer and the expected one."""
    seed, public_users, sovereign_users = CACHES[name]
    builder = CacheBuilder(name, seed)
    populate(builder, public_users, sovereign_users)
    serialized, written = builder.build()
    cache = json.loads(serialized)
    ours_model = OurRules(cache)
    names = secret_names(cache)
    records = []
    for index, (kind, query) in enumerate(derive_queries(written, random.Random(seed + 1), limit=140)):
        msal_says = msal_answer(serialized, query)
        ours, facts = ours_model.answer(query)
        differences: list[str] = []
        if msal_says != ours:
            differences = explain(query, msal_says, ours, facts, cache)
            if not differences:
                raise AssertionError(
                    f"{name} query {index} ({kind}) {query}: MSAL Python says {msal_says.describe(names)}, token-cache's "
                    f"rules say {ours.describe(names)}, and no documented difference explains it")
        records.append({
            "id": f"{name}-{index:03d}-{kind}", "cache": name, "kind": kind,
            "query": dataclasses.asdict(query) | {"scopes": list(query.scopes)},
            "msal": dataclasses.asdict(msal_says), "expected": dataclasses.asdict(ours if differences else msal_says),
            "differences": differences,
            "note": "; ".join(DIFFERENCES[d] for d in differences) + (
                f". MSAL Python: {msal_says.describe(names)}; token-cache: {ours.describe(names)}" if differences else ""),
        })
    return serialized, records


def secret_label(secret: str) -> str:
    """The label the generator put inside a secret (an access token's ``uti`` claim, a refresh token's suffix).

    Messages name tokens by these labels (e.g. ``large-at-0041``), never by the secret itself.
    """
    if secret.startswith("1.A") and "_" in secret:
        return secret.rsplit("_", 1)[1]
    try:
        payload = secret.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["uti"]
    except (IndexError, ValueError, KeyError, TypeError):
        return "(a token the generator did not write)"


def secret_names(cache: dict[str, Any]) -> dict[str, str]:
    """A label for each access- and refresh-token secret of a cache (see ``secret_label``)."""
    return {entry["secret"]: secret_label(entry["secret"]) for section in ("AccessToken", "RefreshToken")
            for entry in cache.get(section, {}).values()}


def generate(out_dir: str) -> dict[str, Any]:
    """Writes ``<name>.msal.json`` for each cache, ``queries.json`` and ``manifest.json`` into out_dir."""
    if msal.__version__ != MSAL_VERSION_REQUIRED:
        raise SystemExit(f"msal {MSAL_VERSION_REQUIRED} is required, found {msal.__version__}: use the pinned venv (make interop-venv)")
    os.makedirs(out_dir, exist_ok=True)
    all_queries = []
    manifest: dict[str, Any] = {"msal_version": msal.__version__, "now": NOW, "caches": {}}
    for name in CACHES:
        serialized, records = generate_cache(name)
        path = os.path.join(out_dir, f"{name}.msal.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(serialized)
        manifest["caches"][name] = {"file": os.path.basename(path),
                                    "counts": {k: len(v) for k, v in json.loads(serialized).items()},
                                    "queries": len(records)}
        all_queries.extend(records)
    with open(os.path.join(out_dir, "queries.json"), "w", encoding="utf-8") as f:
        json.dump(all_queries, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


# ---------------------------------------------------------------------------------------------------------------
# Self-check
# ---------------------------------------------------------------------------------------------------------------

def self_check(out_dir: str) -> list[tuple[bool, str]]:
    """Checks that generated caches hold every kind of entity and that the answers are not trivial.

    Returns (passed, description) pairs; the runner prints them and counts them as tests.
    """
    results: list[tuple[bool, str]] = []

    def check(ok: bool, text: str) -> None:
        results.append((bool(ok), text))

    with open(os.path.join(out_dir, "queries.json"), encoding="utf-8") as f:
        queries = json.load(f)
    sovereign_hosts = set(alias_group(US_GOVERNMENT.writer_host) + alias_group(CHINA.writer_host))
    for name in CACHES:
        with open(os.path.join(out_dir, f"{name}.msal.json"), encoding="utf-8") as f:
            cache = json.load(f)
        counts = {section: len(cache.get(section, {})) for section in ("AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata")}
        check(all(counts.values()), f"{name}: every section is populated {counts}")
        ats = list(cache["AccessToken"].values())
        rts = list(cache["RefreshToken"].values())
        accounts = list(cache["Account"].values())
        kinds = {
            "ssh-cert access token with key_id": sum(1 for at in ats if at.get("token_type") == "ssh-cert" and at.get("key_id")),
            "pop access token with key_id": sum(1 for at in ats if at.get("token_type") == "pop" and at.get("key_id")),
            "app access token (no account)": sum(1 for at in ats if at.get("home_account_id") is None),
            "app access token with an extended cache key (FMI path)": sum(1 for at in ats if at.get("ext_cache_key")),
            "family refresh token": sum(1 for rt in rts if rt.get("family_id") == "1"),
            "family app metadata": sum(1 for m in cache["AppMetadata"].values() if m.get("family_id") == "1"),
            "non-family app metadata": sum(1 for m in cache["AppMetadata"].values() if not m.get("family_id")),
            "access token with refresh_on": sum(1 for at in ats if "refresh_on" in at),
            "realm common": sum(1 for at in ats if at.get("realm") == "common"),
            "guest account (second realm of a home account)": sum(
                1 for a in accounts if not a["home_account_id"].endswith("." + a["realm"]) and a["realm"] not in COMMON_REALMS),
            "US Government entries": sum(1 for at in ats if at["environment"] in alias_group(US_GOVERNMENT.writer_host)),
            "China entries (both hosts)": min(sum(1 for at in ats if at["environment"] == h) for h in alias_group(CHINA.writer_host)),
            "login.windows.net alias entries": sum(1 for at in ats if at["environment"] == "login.windows.net"),
            "expired access tokens": sum(1 for at in ats if int(at["expires_on"]) < NOW),
            "sovereign refresh tokens": sum(1 for rt in rts if rt["environment"] in sovereign_hosts),
            "client ids with several refresh tokens (one per scope set)": sum(
                1 for n in _count_by(rts, lambda rt: (rt["home_account_id"], rt["environment"], rt["client_id"])).values() if n > 1),
        }
        for kind, count in kinds.items():
            check(count > 0, f"{name}: {kind}: {count}")
        mine = [q for q in queries if q["cache"] == name]
        outcomes = _count_by(mine, lambda q: q["expected"]["outcome"])
        check(all(outcomes.get(o, 0) >= 5 for o in ("hit", "refresh", "interaction_required")),
              f"{name}: {len(mine)} queries, expected outcomes {dict(sorted(outcomes.items()))}")
        check(any(q["expected"]["refresh_recommended"] for q in mine), f"{name}: a hit with refresh_recommended")
        check(any(q["msal"]["outcome"] == "hit" and q["query"]["key_id"] for q in mine), f"{name}: a keyed (ssh-cert/pop) hit")
        check(any(q["msal"]["outcome"] == "hit" and q["query"]["home_account_id"] is None for q in mine), f"{name}: an app-token hit")
        check(any(q["msal"]["outcome"] == "hit" and q["query"]["parameters"] for q in mine),
              f"{name}: an app-token hit under an extended cache key")
        check(sum(1 for q in mine if q["kind"] in EXTENDED_KEY_QUERY_KINDS) >= 4,
              f"{name}: queries that probe an extended key's partition from outside")
    marked = _count_by([d for q in queries for d in q["differences"]], lambda d: d)
    check(len(marked) == len(DIFFERENCES), f"every documented difference is exercised: {dict(sorted(marked.items()))}")
    check(sum(1 for q in queries if not q["differences"]) >= len(queries) * 0.6,
          f"most queries need no marking: {sum(1 for q in queries if not q['differences'])} of {len(queries)} agree with MSAL Python")
    return results


def _count_by(items: Iterable[Any], key: Any) -> dict[Any, int]:
    counts: dict[Any, int] = {}
    for item in items:
        counts[key(item)] = counts.get(key(item), 0) + 1
    return counts


def deterministic(out_dir: str) -> tuple[bool, str]:
    """Generates a second time into a temporary directory and compares every file byte for byte."""
    with tempfile.TemporaryDirectory() as second:
        generate(second)
        names = sorted(os.listdir(out_dir))
        same = names == sorted(os.listdir(second)) and all(filecmp.cmp(os.path.join(out_dir, n), os.path.join(second, n), shallow=False)
                                                            for n in names)
        return same, f"two runs are byte-identical ({len(names)} files)"


def main() -> int:
    ensure_fixed_hash_seed()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory for the caches, queries.json and manifest.json")
    parser.add_argument("--check", action="store_true", help="also generate a second time, compare, and self-check")
    args = parser.parse_args()
    manifest = generate(args.out)
    for name, info in manifest["caches"].items():
        print(f"{name}: {info['counts']}, {info['queries']} queries")
    if not args.check:
        return 0
    results = [deterministic(args.out)] + self_check(args.out)
    for ok, text in results:
        print(("PASS " if ok else "FAIL ") + text)
    failed = sum(1 for ok, _ in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
