"""Which account a CLI backend's runs spend, named without a secret (the agent's `account` attribute).

Failover moves to another agent, or another account, when one is spent: it must tell two runs of the same CLI on
different credentials apart without ever holding a key. An API key is named by a short hash of its value; a
stored login by the folder the CLI keeps it in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping


def credential_source(env: Mapping[str, str], key_variables: tuple[str, ...], login_folder: str) -> str:
    """ "api-key:" + the first 12 hex digits of sha256(the first key variable set), else "login:" + the folder
    where the CLI keeps its own login (what it falls back to when no key is in its environment)."""
    for variable in key_variables:
        value = env.get(variable, "").strip()
        if value:
            return "api-key:" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]
    return "login:" + login_folder
