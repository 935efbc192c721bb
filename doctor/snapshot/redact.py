"""Secret redaction for everything the doctor writes out: collected env values, bundle files, pip freeze, and the
log lines `explain` quotes as evidence.

Rule (docs/schemas/snapshot.md rule 3): the value of a variable whose *name* contains one of SECRET_WORDS (TOKEN,
SECRET, PASSWORD, PASSWD, PASSPHRASE, KEY, CREDENTIAL or AUTH), or has PW or PWD as a whole part (SECRET_PARTS:
HCCL_PW, PW_FILE, DB_PWD — but not the shell's own PWD / OLDPWD, the working directory, kept as paths), becomes
"<redacted>"; HCCL_PASSWD and ASCEND_PASSWD are real Ascend names. Credentials embedded in URLs
(`https://user:pass@host`, `git+https://TOKEN@github.com/...`) are redacted wherever they appear, because
index URLs and git sources routinely carry them (PIP_INDEX_URL, HF_ENDPOINT, pip freeze `@ git+https://`), and so
are a URL's secret-named query parameters (`?access_token=`, `&api_key=`, pre-signed `X-Amz-Signature=` / `sig=`)
and an `Authorization: Bearer …` value. Cloud access key pairs are named AK / SK (Huawei Cloud's HUAWEICLOUD_SDK_AK /
HUAWEICLOUD_SDK_SK, an OBS or ModelArts job's OBS_AK / MA_SK): those two are secret as a whole part of a name.
Tokens whose issuer gives them a prefix (TOKEN_SHAPES: Hugging Face, GitHub, GitLab, AWS key ids, `sk-` keys, JWTs)
and PEM private key blocks are redacted by their shape wherever they stand, in a value under an innocent name
or a line of a bundle file.
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL", "AUTH")
# Abbreviations too short to match inside a word (PW in "POWER", SK in "TASK", AK in "PEAK"), so only as a part
# between `_`, `.` or `-`: a password, and a cloud access key pair (Huawei Cloud's SDK reads HUAWEICLOUD_SDK_AK /
# HUAWEICLOUD_SDK_SK, and `ak` / `sk` in ~/.huaweicloud/credentials: EnvCredentialProvider / ProfileCredentialProvider in
# https://github.com/huaweicloud/huaweicloud-sdk-python-v3/blob/master/huaweicloud-sdk-core/huaweicloudsdkcore/auth/provider.py).
SECRET_PARTS = ("PW", "PWD", "AK", "SK")
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
    """Redact a free-form file: secret-named assignments on any line, then URL credentials and token shapes anywhere."""

    def _line(m: re.Match[str]) -> str:
        if not is_secret_name(m["name"]) or not m["value"].strip():
            return m.group(0)
        return f"{m['lead']}{m['name']}{m['sep']}{REDACTED}{m['eol']}"

    return redact_token_shapes(redact_url_credentials(re.sub(_ASSIGN, _line, text)))


# A log line (what `explain` quotes): a secret-named variable's value anywhere in the line (`HF_TOKEN=hf_...`,
# `'api_key': '...'`), a command-line option's (`--api-key=…`, `--hf-token …`: _FLAG), a token of the shapes the hubs and clouds issue, and what
# redact_url_credentials takes. A name counts when it is written the way variables are (UPPER or snake_case: KeyError
# is a class) and one of its `_` parts is a secret word or ends with one (HF_TOKEN, APIKEY, HCCL_PASSWD; not
# TOKENIZERS_PARALLELISM or max_tokens); a lone `key` / `auth` is prose ("cache key: ...").
_INLINE = (r"(?P<q>['\"]?)(?P<name>\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*)(?P=q)(?P<sep>\s*[=:]\s*)"
           r"(?P<vq>['\"]?)(?P<value>[^\s'\",;}\]]+)")
_SECRET_ENDS = (*SECRET_WORDS, "CREDENTIALS", "PW", "PWD")
# A long option and its value, `=` or space separated (vllm serve's --api-key, a hub's --token): secret when one of
# its `-`/`_` parts ends with a secret word (not --max-num-batched-tokens, --tokenizer-mode). A value starting with
# `-` is the next option, not this one's value; a quoted value is taken whole.
_FLAG = (r"(?P<flag>(?<![\w-])--(?P<name>[A-Za-z][A-Za-z0-9_\-]*))(?P<sep>=|\s+)"
         r"(?P<value>\"[^\"]*\"|'[^']*'|(?!-)[^\s'\",;}\]]+)")
# Secrets told by their shape, wherever they stand: (what, pattern, the issuer's statement of the shape). Each has a
# prefix its issuer documents, so no version, path or commit id matches; a bare 40-hex W&B key or a Huawei AK/SK
# has none, and is redacted by its name only.
TOKEN_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("Hugging Face user / organisation token", r"hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}",
     "https://huggingface.co/docs/hub/security-tokens"),
    ("GitHub token: personal (classic), OAuth, user-to-server, server-to-server, refresh",
     r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}",
     "https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/"),
    ("GitLab token: personal, OAuth secret, deploy, runner, CI job, trigger, feed, mail, agent, SCIM, flags; "
     "runner registration", r"gl(?:pat|oas|dt|rt|cbt|ptt|ft|imt|agent|soat|ffct)-[A-Za-z0-9_\-]{20,}(?:\.[a-z0-9]+)*"
     r"|GR1348941[A-Za-z0-9_\-]{20,}", "https://docs.gitlab.com/security/tokens/#token-prefixes"),
    ("AWS access key id (long-term AKIA, temporary ASIA)", r"(?:AKIA|ASIA)[0-9A-Z]{16}",
     "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids"),
    ("OpenAI-style API key (sk-, sk-proj-)", r"sk-[A-Za-z0-9_\-]{20,}",
     "https://platform.openai.com/docs/api-reference/authentication"),
    ("JSON Web Token: base64url of a JSON header and payload, both starting `{\"` (eyJ), and a signature",
     r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.?[A-Za-z0-9_\-]*", "https://www.rfc-editor.org/rfc/rfc7519"),
)
_TOKEN_SHAPES = r"\b(?:" + "|".join(pattern for _, pattern, _ in TOKEN_SHAPES) + r")\b"
# A PEM private key (RFC 7468: PRIVATE KEY, ENCRYPTED / RSA / EC / OPENSSH PRIVATE KEY, PGP PRIVATE KEY BLOCK), from
# its BEGIN line to its END line or, cut short, to the end of the text; its base64 body has no shape of its own.
_PEM_KEY = (r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)")


def redact_token_shapes(text: str) -> str:
    """Every TOKEN_SHAPES token and PEM private key block in `text` -> REDACTED."""
    if "PRIVATE KEY" in text:
        text = re.sub(_PEM_KEY, REDACTED, text)
    return re.sub(_TOKEN_SHAPES, REDACTED, text)


def _inline_secret_name(name: str) -> bool:
    if not (name.isupper() or name.islower()) or name.upper() in NOT_SECRET:
        return False
    parts = name.upper().split("_")
    if len(parts) == 1 and parts[0] in ("KEY", "AUTH"):
        return False
    return any(_secret_part(p) for p in parts)


def _secret_part(part: str) -> bool:
    """A name part (upper case) that makes a name secret in a line: ending with a secret word (APIKEY, HFTOKEN), or a
    whole AK / SK (not TASK, MASK, PEAK: `--task generate` is vllm's)."""
    return part.endswith(_SECRET_ENDS) or part in SECRET_PARTS


def redact_line(text: str) -> str:
    """One log line with its secrets redacted (see above); the rest of the line, which a signature matched, kept."""
    text = redact_token_shapes(redact_url_credentials(text))
    if "--" in text:
        text = re.sub(_FLAG, _flag_value, text)
    if "=" in text or ":" in text:
        text = re.sub(_INLINE, lambda m: (m.group(0) if not _inline_secret_name(m["name"]) or m["value"] == REDACTED
                                          else f"{m['q']}{m['name']}{m['q']}{m['sep']}{m['vq']}{REDACTED}"), text)
    return text


def _flag_value(m: re.Match[str]) -> str:
    parts = re.split(r"[-_]", m["name"].upper())
    if m["value"] == REDACTED or not any(_secret_part(p) for p in parts if p):
        return m.group(0)
    return f"{m['flag']}{m['sep']}{REDACTED}"
