"""One silent access-token lookup in a fresh process, the way a command-line tool on msal-extensions does it.

Why: ``cachetool lookup`` is timed one process per call; the fair Python counterpart is a process that starts
the interpreter, imports msal-extensions, opens the persisted cache (reading and parsing the whole file) and
answers one lookup. compare.py spawns this script and times the whole process from outside.

Usage: ``python msal_ext_lookup_once.py FILE HOME_ACCOUNT_ID ENVIRONMENT CLIENT_ID REALM SCOPE NOW``; prints the
length of the access token found (exit 1 when none).
"""

import sys

from msal_extensions import FilePersistence, PersistedTokenCache


def main() -> int:
    path, home_account_id, environment, client_id, realm, scope, now = sys.argv[1:8]
    cache = PersistedTokenCache(FilePersistence(path))
    query = {"client_id": client_id, "environment": environment, "realm": realm, "home_account_id": home_account_id}
    for entry in cache.search("AccessToken", target=[scope], query=query, now=int(now)):
        print(len(entry["secret"]))
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
