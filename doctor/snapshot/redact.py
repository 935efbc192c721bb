"""Secret redaction for everything the doctor writes out: collected env values, bundle files, pip freeze, and the
log lines `explain` quotes as evidence.

Rule (docs/schemas/snapshot.md rule 3): the value of a variable whose *name* contains one of SECRET_WORDS (TOKEN,
SECRET, PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL or AUTH), or has PW or PWD as a whole part (SECRET_PARTS:
HCCL_PW, PW_FILE, DB_PWD — but not the shell's own PWD / OLDPWD, the working directory, kept as paths), becomes
"<redacted>"; HCCL_PASSWD and ASCEND_PASSWD are real Ascend names. Credentials embedded in URLs
(`https://user:pass@host`, `git+https://TOKEN@github.com/...`) are redacted wherever they appear, because
index URLs and git sources routinely carry them (PIP_INDEX_URL, HF_ENDPOINT, pip freeze `@ git+https://`), and so
are a URL's secret-named query parameters (`?access_token=`, `&api_key=`, pre-signed `X-Amz-Signature=` / `sig=`)
and an `Authorization: Bearer …` value.
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


# A URL's query parameter whose name holds a secret word (`?access_token=`, `&api_key=`, S3's `X-Amz-Signature=`,
# Azure SAS's `sig=`): the credential of a pre-signed or token URL, which the host part does not carry.
_QUERY_SECRET = r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^&;#\s'\"<>]+)"
_QUERY_WORDS = (*SECRET_WORDS, "SIG")
# An HTTP Authorization value written out (`Authorization: Bearer <token>`, `Basic <base64>`).
# A bearer token of any length; after Basic / Token only a credential-like word (8+ characters), not prose ("Basic usage").
_BEARER = r"(?i)\b(?:(?P<bearer>Bearer)\s+[A-Za-z0-9._~+/=\-]+|(?P<scheme>Basic|Token)\s+[A-Za-z0-9._~+/=\-]{8,})"


def redact_url_credentials(text: str) -> str:
    """`https://user:pass@host/x` -> `https://<redacted>@host/x` (the user part can itself be a token); a URL's
    secret-named query parameter (`?access_token=…`, `X-Amz-Signature=…`, `sig=…`) and an `Authorization: Bearer …`
    value are redacted too."""
    if "://" not in text:
        return _redact_bearer(text)
    if "@" in text:
        text = re.sub(_URL_CRED, lambda m: f"{m['scheme']}{REDACTED}@", text)
    if "?" in text:
        text = re.sub(_QUERY_SECRET, _query_param, text)
    return _redact_bearer(text)


def _query_param(m: re.Match[str]) -> str:
    upper = m["name"].upper()
    if not any(word in upper for word in _QUERY_WORDS):
        return m.group(0)
    return f"{m['lead']}{m['name']}={REDACTED}"


def _redact_bearer(text: str) -> str:
    low = text.lower()  # HTTP auth schemes are case-insensitive (RFC 9110 11.1): `authorization: basic …` too
    if "bearer" not in low and "basic" not in low and "token" not in low:
        return text
    return re.sub(_BEARER, lambda m: f"{m['bearer'] or m['scheme']} {REDACTED}", text)


def redact_value(name: str, value: str) -> str:
    """The value to record for env var `name`.

    A value can hold other variables' secrets: Ray's job supervisor gives the driver RAY_JOB_CONFIG_JSON_ENV_VAR,
    the job's runtime_env as JSON, whose env_vars are where users pass WANDB_API_KEY / HF_TOKEN to `ray job submit`;
    a RAY_/VLLM_ variable can carry a command line's `--api-key=…`. So a value gets what a log line gets
    (redact_line: secret-named keys inside it, hub token shapes). A search path (PATH, LD_LIBRARY_PATH, PYTHONPATH,
    LD_PRELOAD, …_PATH) keeps its directories: `/opt/x_token:/usr/bin` is a directory, not a key and its value."""
    if is_secret_name(name):
        return REDACTED
    if name.upper().endswith(_SEARCH_PATHS):
        return redact_url_credentials(value)
    return redact_line(value)


# Variables whose value is a list of directories joined by ':' (which redact_line would read as `name: value`).
_SEARCH_PATHS = ("PATH", "LD_PRELOAD", "_HOME", "_DIR")


def redact_text(text: str) -> str:
    """Redact a free-form file: secret-named assignments on any line, then URL credentials anywhere."""

    def _line(m: re.Match[str]) -> str:
        if not is_secret_name(m["name"]) or not m["value"].strip():
            return m.group(0)
        return f"{m['lead']}{m['name']}{m['sep']}{REDACTED}{m['eol']}"

    return redact_url_credentials(re.sub(_ASSIGN, _line, text))


# A log line (what `explain` quotes): a secret-named variable's value anywhere in the line (`HF_TOKEN=hf_...`,
# `'api_key': '...'`), a command-line option's (`--api-key=…`, `--hf-token …`: _FLAG), a token of the shapes the hubs and clouds issue, and what
# redact_url_credentials takes. A name counts when it is written the way variables are (UPPER or snake_case: KeyError
# is a class) and one of its `_` parts is a secret word or ends with one (HF_TOKEN, APIKEY, HCCL_PASSWD; not
# TOKENIZERS_PARALLELISM or max_tokens); a lone `key` / `auth` is prose ("cache key: ...").
_INLINE = (r"(?P<q>['\"]?)(?P<name>\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*)(?P=q)(?P<sep>\s*[=:]\s*)"
           r"(?P<vq>['\"]?)(?P<value>[^\s'\",;}\]]+)")
_SECRET_ENDS = (*SECRET_WORDS, "CREDENTIALS", *SECRET_PARTS)
# A long option and its value, `=` or space separated (vllm serve's --api-key, a hub's --token): secret when one of
# its `-`/`_` parts ends with a secret word (not --max-num-batched-tokens, --tokenizer-mode). A value starting with
# `-` is the next option, not this one's value; a quoted value is taken whole.
_FLAG = (r"(?P<flag>(?<![\w-])--(?P<name>[A-Za-z][A-Za-z0-9_\-]*))(?P<sep>=|\s+)"
         r"(?P<value>\"[^\"]*\"|'[^']*'|(?!-)[^\s'\",;}\]]+)")
# Hugging Face, GitHub (classic and fine-grained), AWS access key ids, OpenAI-style keys.
_TOKEN_SHAPES = (r"\b(?:hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}|AKIA[0-9A-Z]{16}"
                 r"|sk-[A-Za-z0-9_\-]{20,})\b")


def _inline_secret_name(name: str) -> bool:
    if not (name.isupper() or name.islower()) or name.upper() in NOT_SECRET:
        return False
    parts = name.upper().split("_")
    if len(parts) == 1 and parts[0] in ("KEY", "AUTH"):
        return False
    return any(p.endswith(_SECRET_ENDS) for p in parts)


def redact_line(text: str) -> str:
    """One log line with its secrets redacted (see above); the rest of the line, which a signature matched, kept."""
    text = re.sub(_TOKEN_SHAPES, REDACTED, redact_url_credentials(text))
    if "--" in text:
        text = re.sub(_FLAG, _flag_value, text)
    if "=" in text or ":" in text:
        text = re.sub(_INLINE, lambda m: (m.group(0) if not _inline_secret_name(m["name"]) or m["value"] == REDACTED
                                          else f"{m['q']}{m['name']}{m['q']}{m['sep']}{m['vq']}{REDACTED}"), text)
    return text


def _flag_value(m: re.Match[str]) -> str:
    parts = re.split(r"[-_]", m["name"].upper())
    if m["value"] == REDACTED or not any(p.endswith(_SECRET_ENDS) for p in parts if p):
        return m.group(0)
    return f"{m['flag']}{m['sep']}{REDACTED}"
