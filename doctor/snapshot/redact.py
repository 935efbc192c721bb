"""Secret redaction for everything the doctor writes out: collected env values, bundle files, pip freeze.

Rule (docs/schemas/snapshot.md rule 3): the value of a variable whose *name* contains one of SECRET_WORDS (TOKEN,
SECRET, PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL or AUTH), or has PW or PWD as a whole part (SECRET_PARTS:
HCCL_PW, PW_FILE, DB_PWD — but not the shell's own PWD / OLDPWD, the working directory, kept as paths), becomes
"<redacted>"; HCCL_PASSWD and ASCEND_PASSWD are real Ascend names. Credentials embedded in URLs
(`https://user:pass@host`, `git+https://TOKEN@github.com/...`) are redacted wherever they appear, because
index URLs and git sources routinely carry them (PIP_INDEX_URL, HF_ENDPOINT, pip freeze `@ git+https://`).
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL", "AUTH")
# Abbreviations too short to match inside a word (PW in "POWER"?), so only as a part between `_`, `.` or `-`.
SECRET_PARTS = ("PW", "PWD")
# The shell's working directories: paths, not passwords (a name of one part, PWD, would otherwise match).
NOT_SECRET = frozenset({"PWD", "OLDPWD"})
_PARTS = re.compile(r"[_.\-]+")

# The two patterns below are compiled on first use (re's own cache): `doctor check` needs the first only for a value
# holding both '://' and '@', and the second never (it redacts the files `collect --bundle` writes).
# scheme://userinfo@host — userinfo is everything up to the last '@' before the next '/', space or quote.
_URL_CRED = r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<userinfo>[^\s/@'\"<>]+)@"
# NAME=value / NAME: value / export NAME="value" at the start of a line (bundle files, env dumps).
_ASSIGN = r"(?m)^(?P<lead>\s*(?:export\s+)?)(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)(?P<sep>\s*[=:]\s*)(?P<value>.*?)(?P<eol>\r?)$"


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if upper in NOT_SECRET:
        return False
    return any(word in upper for word in SECRET_WORDS) or any(p in SECRET_PARTS for p in _PARTS.split(upper))


def redact_url_credentials(text: str) -> str:
    """`https://user:pass@host/x` -> `https://<redacted>@host/x` (the user part can itself be a token)."""
    if "@" not in text or "://" not in text:
        return text
    return re.sub(_URL_CRED, lambda m: f"{m['scheme']}{REDACTED}@", text)


def redact_value(name: str, value: str) -> str:
    """The value to record for env var `name`."""
    if is_secret_name(name):
        return REDACTED
    return redact_url_credentials(value)


def redact_text(text: str) -> str:
    """Redact a free-form file: secret-named assignments on any line, then URL credentials anywhere."""

    def _line(m: re.Match[str]) -> str:
        if not is_secret_name(m["name"]) or not m["value"].strip():
            return m.group(0)
        return f"{m['lead']}{m['name']}{m['sep']}{REDACTED}{m['eol']}"

    return redact_url_credentials(re.sub(_ASSIGN, _line, text))
