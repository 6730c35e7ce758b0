"""What the other vendors' CLIs need inside ralph's sandbox (issue 35): Gemini CLI, GitHub Copilot CLI, Amp and
Cursor's CLI, each its credentials, its API's address, its login and settings files, and its hosts.

Gemini CLI 0.61.0 (its bundle's paths.ts, oauth2.ts, fileKeychain.ts), Copilot CLI 1.0.102 (`copilot help
environment`, its OAuth app's client id) and Amp 0.0.1790142911 (`amp --help`, where it wrote its files) were read
in their installed code. Cursor's CLI cannot be installed here: its needs are from Cursor's documentation
(cursor.com/docs/cli/reference: authentication, configuration), not shown in the box.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ralphloop.agents.sandbox_needs import api_hosts
from ralphloop.core.sandbox import SandboxNeeds

_GEMINI_ENV: Final = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",  # Vertex AI express mode
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_CLOUD_ACCESS_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",  # a file: read in the box only where it is outside the home
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "CODE_ASSIST_ENDPOINT",
    "GEMINI_MODEL",
    "GEMINI_DEFAULT_AUTH_TYPE",
    "GEMINI_FORCE_ENCRYPTED_FILE_STORAGE",
    "GEMINI_CLI_NO_RELAUNCH",
    "GEMINI_TELEMETRY_ENABLED",
    "NODE_EXTRA_CA_CERTS",
)
_GEMINI_ADDRESSES: Final = ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "CODE_ASSIST_ENDPOINT")
# the Gemini API (a key), Code Assist (a Google login), Google's token and user-info endpoints (that login refreshed)
_GEMINI_HOSTS: Final = (
    "generativelanguage.googleapis.com:443",
    "cloudcode-pa.googleapis.com:443",
    "oauth2.googleapis.com:443",
    "www.googleapis.com:443",
)


def gemini_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """Gemini CLI: its keys, its login and settings in ~/.gemini (oauth_creds.json, or gemini-credentials.json with
    GEMINI_FORCE_ENCRYPTED_FILE_STORAGE; google_accounts.json; settings.json), and its APIs: the address a variable
    sets, else the Gemini API's, Code Assist's, Google's OAuth hosts and Vertex AI's. A Google login's refresh token
    is not used up by a refresh (the CLI rewrites oauth_creds.json with the new access token only), so the copies of
    parallel loops may each refresh it: no login to write back.

    GEMINI_CLI_HOME (a home of its own holding `.gemini`) does not reach the box: there the CLI reads the box's home,
    seeded from ~/.gemini."""
    addressed = [host for name in _GEMINI_ADDRESSES for host in api_hosts(environ, (name,), ())]
    location = environ.get("GOOGLE_CLOUD_LOCATION", "").strip().lower()
    vertex = ["aiplatform.googleapis.com:443"]
    if location and location != "global" and location.replace("-", "").isalnum():
        vertex.append(f"{location}-aiplatform.googleapis.com:443")
    return SandboxNeeds(
        env=_GEMINI_ENV,
        home_files=(
            ".gemini/oauth_creds.json",
            ".gemini/gemini-credentials.json",
            ".gemini/google_accounts.json",
            ".gemini/settings.json",
        ),
        hosts=tuple(dict.fromkeys(addressed)) or (*_GEMINI_HOSTS, *vertex),
        login_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        login_hint="gemini: set GEMINI_API_KEY to an API key",
        declared=True,
    )


_COPILOT_ENV: Final = (
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_HOST",
    "COPILOT_GH_HOST",
    "COPILOT_MODEL",
    "COPILOT_OFFLINE",
    "COPILOT_AUTO_UPDATE",
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_TYPE",
    "COPILOT_PROVIDER_API_KEY",
    "COPILOT_PROVIDER_API_KEY_COMMAND",
    "COPILOT_PROVIDER_BEARER_TOKEN",
    "COPILOT_PROVIDER_WIRE_API",
    "COPILOT_PROVIDER_TRANSPORT",
    "COPILOT_PROVIDER_AZURE_API_VERSION",
    "COPILOT_PROVIDER_MODEL_ID",
    "COPILOT_PROVIDER_WIRE_MODEL",
    "COPILOT_PROVIDER_MAX_PROMPT_TOKENS",
    "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS",
    "COPILOT_PROVIDER_HEADERS",
    "NODE_EXTRA_CA_CERTS",
)
# GitHub's login and API, and Copilot's model endpoints (api.githubcopilot.com, api.individual.githubcopilot.com, ...)
_COPILOT_HOSTS: Final = ("github.com:443", "api.github.com:443", "*.githubcopilot.com:443")


def copilot_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """Copilot CLI: its token or its custom provider's key, its state and settings (config.json, settings.json: where
    COPILOT_HOME points, else ~/.copilot), and its hosts: the custom provider's (COPILOT_PROVIDER_BASE_URL: no GitHub
    login then), else GitHub's and Copilot's (a GitHub Enterprise host's too, when GH_HOST or COPILOT_GH_HOST names
    one). Its login is an OAuth app's token, never refreshed; one kept in the system keyring does not reach the box.
    Its unpacked bundle (COPILOT_CACHE_HOME) is made again in the box's home on its first run there."""
    provider = api_hosts(environ, ("COPILOT_PROVIDER_BASE_URL",), ())
    host = (environ.get("COPILOT_GH_HOST") or environ.get("GH_HOST") or "").strip().lower()
    enterprise = (f"{host}:443", f"*.{host}:443") if host and host != "github.com" and "/" not in host else ()
    return SandboxNeeds(
        env=_COPILOT_ENV,
        home_files=(".copilot/config.json", ".copilot/settings.json"),
        config_dirs=(("COPILOT_HOME", ".copilot"),),
        hosts=provider or (*_COPILOT_HOSTS, *enterprise),
        login_env=("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY"),
        login_hint="copilot: set COPILOT_GITHUB_TOKEN to a fine-grained token with the Copilot Requests permission",
        declared=True,
    )


def amp_needs(environ: Mapping[str, str]) -> SandboxNeeds:
    """Amp: its access token (AMP_API_KEY, or the one `amp login` keeps in secrets.json under $XDG_DATA_HOME/amp,
    else ~/.local/share/amp: a long-lived token, never refreshed), its settings (settings.json under
    $XDG_CONFIG_HOME/amp, else ~/.config/amp), and its server (AMP_URL, else ampcode.com)."""
    return SandboxNeeds(
        env=("AMP_API_KEY", "AMP_URL", "AMP_LOG_LEVEL", "NODE_EXTRA_CA_CERTS"),
        home_files=(".config/amp/settings.json", ".local/share/amp/secrets.json"),
        config_dirs=(("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")),
        hosts=api_hosts(environ, ("AMP_URL",), ("ampcode.com:443",)),
        login_env=("AMP_API_KEY",),
        login_hint="amp: set AMP_API_KEY to an access token (ampcode.com/settings)",
        declared=True,
    )


_CURSOR_LOGINS: Final = (".cursor/cli-config.json", ".config/cursor/auth.json")


# Cursor's CLI, from its documentation: its key or token, its config (cli-config.json, where CURSOR_CONFIG_DIR points,
# else ~/.cursor), its hosts (*.cursor.sh). Its browser login (in cli-config.json now, in ~/.config/cursor/auth.json
# before) is renewed by the CLI; whether its refresh token is used up could not be seen here, so both files are
# taken as such a login: written back, never shared by parallel loops.
CURSOR: Final = SandboxNeeds(
    env=("CURSOR_API_KEY", "CURSOR_AUTH_TOKEN", "NO_OPEN_BROWSER", "NODE_EXTRA_CA_CERTS"),
    home_files=_CURSOR_LOGINS,
    config_dirs=(("CURSOR_CONFIG_DIR", ".cursor"),),
    hosts=("*.cursor.sh:443",),
    logins=_CURSOR_LOGINS,
    login_env=("CURSOR_API_KEY", "CURSOR_AUTH_TOKEN"),
    login_hint="cursor: set CURSOR_API_KEY to an API key (Cursor Dashboard, Integrations)",
    declared=True,
)
