"""Trust between the nodes of a training fleet that only the stack can write.

The nodes reach each other as root over SSH (mpirun, pdsh, checkpoint copies). What they trust
comes from three OOS parameters the stack writes and the node role may only read
(blocks.bootstrap.permissions):

- `<fleet>-ssh-user-key`: one ED25519 key for the fleet (pulumi-tls `PrivateKey`), in an
  encrypted parameter (KMS: the stack's key where it has one, else OOS's default key). Every
  node installs it as root's id_ed25519 and authorizes its public half, and nothing else, in
  root's authorized_keys.
- `<fleet>-ssh-host-key`: one ED25519 host key for the fleet, likewise encrypted. Every node
  serves it as /etc/ssh/ssh_host_ed25519_key, and known_hosts pins its public half for the
  fleet's names and addresses, so a machine without it cannot pose as a node.
- `<fleet>-nodes`: the fleet's instance ids (a StringList the stack rewrites when nodes come
  or go; pages of NODE_LIST_PAGE_IDS ids, a page ending in "+" goes on in `-2`, `-3`, ...).
  The hostfile, the torchrun environment, /etc/hosts and known_hosts list these instances
  only (gpu-infra-peers), so an instance tagged into the fleet is not a peer.

Why this shape: before, each node published its own keys in instance tags and trusted what
the tags said, so any principal allowed to tag the fleet's instances (each node's own role
included) could add a key to root's authorized_keys everywhere or swap a peer's host key, and
tag any instance into the hostfile. Per-node host certificates signed by an SSH CA would need
a signer the nodes can reach but not hold, and a scaling group's new nodes would need a
signing service; the nodes of one training fleet are one trust domain anyway (root on one is
root on all through the shared user key), so one stack-held host key pins the fleet as a
whole at no extra moving part. Tags still carry health (GpuInfraHealth): forging one can take
a node out of the hostfile or put a failed one in, but never grants access.

The private keys are Pulumi secrets in the stack's state (encrypted by its secrets provider)
and in the parameters; they are never in user data, commands or plans. A new key (replacing a
PrivateKey) reaches running nodes at their next bootstrap run (a reboot, or starting
gpu-infra-bootstrap.service): the parameter's name, and so the configuration, stays.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import pulumi
import pulumi_alicloud as alicloud
import pulumi_tls as tls

from gpu_infra.blocks.bootstrap import NodeTrustNames
from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name

KEY_ALGORITHM = "ED25519"
"""tls.PrivateKey algorithm of both fleet keys (OpenSSH since 6.5 on every supported image)."""
SECRET_TYPE = "Secret"
"""oos.SecretParameter `type`: the only one the API has."""
NODE_LIST_TYPE = "StringList"
"""oos.Parameter `type` of the node list: comma-separated values (String or StringList, the
provider's values)."""
PARAMETER_VALUE_MAX_CHARS = 4096
"""Longest oos.Parameter value the provider takes (StringLenBetween(1, 4096),
resource_alicloud_oos_parameter.go line 62)."""
INSTANCE_ID_MAX_CHARS = 30
"""Room kept per instance id in a page: ECS ids are `i-` and 20 characters today; the
maximum is not documented (UNCONFIRMED), so the page keeps a margin."""
NODE_LIST_PAGE_IDS = (PARAMETER_VALUE_MAX_CHARS - 2) // (INSTANCE_ID_MAX_CHARS + 1)
"""Instance ids per page of the node list (a page that goes on ends in ",+")."""


def page_name(node_list: str, page: int) -> str:
    """The parameter holding page `page` (1-based) of the node list."""
    return node_list if page == 1 else f"{node_list}-{page}"


def pick(index: int, values: Sequence[str]) -> str:
    """values[index] (one page of node_list_pages)."""
    return values[index]


def node_list_pages(instance_ids: Sequence[str]) -> list[str]:
    """The pages' values: NODE_LIST_PAGE_IDS ids each, comma-separated, each page but the
    last ending in `,+`."""
    chunks = [list(instance_ids[start:start + NODE_LIST_PAGE_IDS])
              for start in range(0, len(instance_ids), NODE_LIST_PAGE_IDS)] or [[]]
    return [",".join([*chunk, "+"] if index < len(chunks) - 1 else chunk)
            for index, chunk in enumerate(chunks)]


class NodeTrust(pulumi.ComponentResource):
    """The fleet's two SSH keys in encrypted OOS parameters (before the nodes exist), and, by
    `publish_nodes`, its node list. `kms_key_id`: the key that encrypts the parameters
    (default: OOS's own).

    Attributes: `keys` (the two oos.SecretParameter, which the nodes' first boot reads),
    `node_list` (the oos.Parameter pages, after publish_nodes)."""

    TYPE = "gpu-infra:compute:NodeTrust"

    def __init__(self, name: str, *, names: NodeTrustNames, conventions: Conventions,
                 kms_key_id: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        self.name = name
        self.names = names
        self.conventions = conventions
        self.keys: list[alicloud.oos.SecretParameter] = []
        for part, parameter in (("ssh-user-key", names.user_key),
                                ("ssh-host-key", names.host_key)):
            key_name = child_name(name, part)
            key = tls.PrivateKey(key_name, algorithm=KEY_ALGORITHM,
                                 opts=pulumi.ResourceOptions(parent=self))
            self.keys.append(alicloud.oos.SecretParameter(
                key_name, secret_parameter_name=parameter, type=SECRET_TYPE,
                value=key.private_key_openssh, key_id=kms_key_id,
                description=f"gpu-infra: the {part.replace('-', ' ')} of fleet {name} "
                            "(read by its nodes at boot)",
                tags=conventions.tags_for(key_name), opts=fixed_name(self)))
        self.node_list: list[alicloud.oos.Parameter] = []

    def publish_nodes(self, instance_ids: Sequence[pulumi.Input[str]]) -> None:
        """The node list: `instance_ids` in pages (node_list_pages)."""
        pages = pulumi.Output.all(*instance_ids).apply(node_list_pages)
        count = max(1, -(-len(instance_ids) // NODE_LIST_PAGE_IDS))
        for page in range(1, count + 1):
            name = child_name(self.name, f"nodes-{page}")
            self.node_list.append(alicloud.oos.Parameter(
                name, parameter_name=page_name(self.names.node_list, page),
                type=NODE_LIST_TYPE, value=pages.apply(functools.partial(pick, page - 1)),
                description="gpu-infra: the instances of the fleet (its nodes' peers)",
                tags=self.conventions.tags_for(name), opts=fixed_name(self)))
        self.register_outputs({"node_list": [p.parameter_name for p in self.node_list]})


__all__ = ["NodeTrust", "node_list_pages", "page_name"]
