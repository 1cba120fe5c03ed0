"""Secret rule: no credential written in clear where the state, the console and the node
show it: user data, build components, commands, Kubernetes containers and ConfigMaps,
function environments, and the tags of any resource (texts.configuration)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpu_infra_facts.credentials import findings_in
from gpu_infra_policies.base import Context, Resource, ResourceRule, Rule
from gpu_infra_policies.texts import CONFIGURED_TYPES, POD_HOLDERS, SCRIPT_INPUTS, configuration


def plaintext_secrets(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """User data (of every node type), build components, commands, Kubernetes containers,
    ConfigMaps, function environments and tags hold no credential in clear or base64."""
    for where, text in configuration(resource):
        for what in findings_in(text):
            yield (f"{where} holds {what} in clear (it lands in the state and on the node); "
                   "use the node's RAM role, or pass it as a Pulumi secret to KMS Secrets "
                   "Manager")


SECRET_RULES: tuple[Rule, ...] = (
    ResourceRule("no-plaintext-secrets", "No credentials in clear in user data, commands, "
                 "containers, config or tags", "security", "critical",
                 "Remove the credential: nodes get credentials from their RAM role, pods from "
                 "RRSA; keep other secrets in KMS Secrets Manager and read them at boot.",
                 plaintext_secrets, concern="secrets",
                 reviews=frozenset({*SCRIPT_INPUTS, *POD_HOLDERS, *CONFIGURED_TYPES})),
)
