"""Release ranges of one package that call an API another package has since removed, read from both at their tags.

A row says: `package` releases in `spec` call `api`, which `needs` removed in the releases `removed` names. Both
halves are read from source at a tag (the caller's call site, the callee's definition before and after), so the
row is a fact of the code, not of a thread. `spec` ends at the newest caller release read: a later release may
have moved off the API, and the row is re-read then (README "Updating the knowledge").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemovedApi:
    package: str  # the caller (PEP 503 name)
    spec: str  # its releases that call the API (PEP 440 specifier)
    needs: str  # the package that defined the API
    removed: str  # the releases of `needs` without it (PEP 440 specifier)
    api: str
    breaks: str  # what fails, as the caller's users see it
    source: str


REMOVED_APIS: tuple[RemovedApi, ...] = (
    # mbridge/core/util.py (get_model's build_model) compares model_type with ModelType.encoder_and_decoder, imported
    # from megatron.core.models.gpt.gpt_model (megatron.core.transformer.enums). Megatron-Core 0.15.x / 0.16.x keep it as
    # a deprecated property of the enum; core_v0.17.0's enum has only encoder_or_decoder. mbridge 0.15.1 is the newest
    # release on PyPI (the requirements table, read 2026-12-03) and mbridge's main still has the call.
    RemovedApi("mbridge", "<=0.15.1", "megatron-core", ">=0.17.0", "megatron.core ModelType.encoder_and_decoder",
               "building a model through mbridge (verl's megatron backend: bridge.get_model) raises AttributeError: type "
               "object 'ModelType' has no attribute 'encoder_and_decoder'",
               "https://github.com/ISEEKYAN/mbridge/blob/v0.15.1/mbridge/core/util.py#L52; "
               "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.16.1/megatron/core/transformer/enums.py; "
               "https://github.com/NVIDIA/Megatron-LM/blob/core_v0.17.0/megatron/core/transformer/enums.py"),
)
