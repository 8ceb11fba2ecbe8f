"""What the storms of Tests/Stress share: token-endpoint responses shaped like Microsoft Entra ID's, running the
storm's threads to the end, and the checks of the store every storm ends with. Standard library only."""
import base64
import json
import threading
import time

AUTHORITY = "https://login.microsoftonline.com/common"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token_response(uid: str, tenant: str, client: str, scopes: str, tag: str, name: str) -> dict:
    """A token-endpoint response for account `uid` of `tenant`, its tokens named after `tag` (unique per attempt)."""
    now = int(time.time())
    claims = {"aud": client, "iss": f"https://login.microsoftonline.com/{tenant}/v2.0", "iat": now, "nbf": now,
              "exp": now + 3600, "name": name, "oid": uid, "preferred_username": f"{uid[:8]}@example.com",
              "sub": uid, "tid": tenant, "ver": "2.0"}
    id_token = ".".join([b64url(b'{"alg":"none","typ":"JWT"}'), b64url(json.dumps(claims).encode()), ""])
    return {
        "token_type": "Bearer", "scope": scopes, "expires_in": 3600, "ext_expires_in": 3600,
        "access_token": "AT-" + tag, "refresh_token": "RT-" + tag, "id_token": id_token,
        "client_info": b64url(json.dumps({"uid": uid, "utid": tenant}).encode()),
    }


def run_threads(threads):
    """Starts every thread, then waits for all of them."""
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def checked_dump(cachetool, problems: list, reveal: bool = False) -> dict:
    """`verify` must be clean; returns `inspect --json` (with secrets when `reveal`), recording what failed in
    `problems`. `cachetool(*arguments)` runs the tool on the storm's store."""
    verify = cachetool("verify", "--json")
    if verify.returncode != 0:
        problems.append(f"verify exited {verify.returncode}: {verify.stdout.strip()[:300]} {verify.stderr.strip()[:300]}")
    dump = cachetool("inspect", "--json", *(["--include-secrets"] if reveal else []))
    if dump.returncode != 0:
        problems.append(f"inspect exited {dump.returncode}: {dump.stderr.strip()[:300]}")
        return {}
    return json.loads(dump.stdout)
