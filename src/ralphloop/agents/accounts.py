"""Which account an agent spends, named without its secret: the key of its limits in the shared book
(agents/agent_limits.py), so that two loops on one account see each other's usage limit and two accounts of one
vendor do not.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence


def account_of(env: Mapping[str, str], key_variables: Sequence[str], login_dir: str) -> str:
    """ "api-key:<first 12 hex digits of the key's sha256>" for the first of `key_variables` that is set (the
    CLI uses it over its login), else "login:<the CLI's config folder>"."""
    for variable in key_variables:
        key = env.get(variable, "").strip()
        if key:
            return f"api-key:{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    return f"login:{os.path.normpath(os.path.abspath(login_dir))}"  # one folder, one key, however it is spelled
