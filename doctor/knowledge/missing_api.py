"""Release ranges of one package that call an API some releases of another package do not have: removed since, or
not there yet. Each row is read from source at a tag (the caller's call site, the callee's definition before and
after) or from the caller's own documentation naming the callee release that lacks it.

A row says: `package` releases in `spec` (empty: any release, also one whose version is not known) call `api`, and
the `needs` releases in `missing` do not have it. `spec` ends at the newest caller release read: a later release
may have moved off the API, and the row is re-read then (README "Updating the knowledge").
"""

# No `from __future__ import annotations`: typing.NamedTuple would compile each string field annotation
# as the class is made; written as objects they cost nothing more (fewer instructions per `doctor check`).

from typing import NamedTuple


class MissingApi(NamedTuple):
    package: str  # the caller (PEP 503 name)
    spec: str  # its releases that call the API (PEP 440 specifier; "" for every release)
    needs: str  # the package that defines the API
    missing: str  # the releases of `needs` without it (PEP 440 specifier)
    api: str
    why: str  # when `needs` lost or gained it
    breaks: str  # what fails, as the caller's users see it
    source: str


MISSING_APIS: tuple[MissingApi, ...] = (
    # mbridge/core/util.py (get_model's build_model) compares model_type with ModelType.encoder_and_decoder, imported
    # from megatron.core.models.gpt.gpt_model (megatron.core.transformer.enums). Megatron-Core 0.15.x / 0.16.x keep it
    # as a deprecated property of the enum; core_v0.17.0's enum has only encoder_or_decoder. mbridge 0.15.1 is the
    # newest release on PyPI (the requirements table, read 2026-12-03); its PyPI wheel has the same two calls.
    MissingApi("mbridge", "<=0.15.1", "megatron-core", ">=0.17.0", "megatron.core ModelType.encoder_and_decoder",
               "removed in Megatron-Core 0.17.0 (a deprecated property through 0.16.1)",
               "building a model through mbridge (verl's megatron backend: bridge.get_model) raises AttributeError: type "
               "object 'ModelType' has no attribute 'encoder_and_decoder'",
               "https://github.com/ISEEKYAN/mbridge/blob/v0.15.1/mbridge/core/util.py#L52; "
               "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.16.1/megatron/core/transformer/enums.py; "
               "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.17.0/megatron/core/transformer/enums.py"),
    # verl's FAQ ("Install related"): on linux-arm64 pip resolves verl's tensordict<=0.6.2 to tensordict 0.1.2, whose
    # TensorDict does not support `key in td`, which verl's DataProto uses; the FAQ's fix is tensordict 0.6.2.
    MissingApi("verl", "", "tensordict", "<=0.1.2", "`key in tensordict` (TensorDict membership checks)",
               "tensordict 0.1.2 raises NotImplementedError on it; verl's FAQ names 0.6.2 as the fix",
               "verl's trainer raises NotImplementedError: TensorDict does not support membership checks with the `in` "
               "keyword",
               "https://github.com/verl-project/verl/blob/v0.4.1/docs/faq/faq.rst"),
)
