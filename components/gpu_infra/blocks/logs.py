"""Node logs in Simple Log Service (SLS): `NodeLogs`, once per stack with a fleet.

What it builds: the project `<cluster>-logs` (SLS project names are unique across Alibaba
Cloud, so it takes the stack's global suffix), two log stores, a machine group and one
LoongCollector pipeline per store, applied to the machine group:

- `bootstrap`: /var/log/gpu-infra/bootstrap.log of every node (input_file);
- `system`: the systemd journal, kernel messages included (service_journal with Kernel on:
  the ilogtail plugin's default, plugins/input/journal in alibaba/ilogtail).

The machine group has identity type `userdefined` and one id, `<fleet>[-<suffix>]`
(`blocks.bootstrap.machine_group_id`), which the bootstrap's `logs` step writes to the node's
/etc/ilogtail/user_defined_id: only this stack's nodes join it, whatever else the account
runs. Each log keeps its host name (`__tag__:__hostname__`, on ECS `iZ<instance id without
i->Z` unless a host name is set) and the step's first bootstrap-log line names the
instance id.

Provider facts (terraform-provider-alicloud 81c43b672): pipeline inputs, processors and
flushers are maps of strings, a JSON list or object in a string is sent decoded
(convertSlsValue, alicloud/resource_alicloud_sls_logtail_pipeline_config.go line 396); the
stores' and indexes' allowed values (retention, encryption type, field types) are in
gpu_infra_facts.allowed with their sources.

Every store has an index (`StoreIndex`, `<name>-<store>-index`): SLS searches only an indexed
store. The index names its store by name, which a replacement keeps (an `encrypt_conf` change),
so its inputs stay the same while DeleteLogStore takes it ("All shards and indexes of the
Logstore are deleted", SLS API reference DeleteLogStore): it is replaced with its store
(`replace_with`). Pulumi deletes it first (DeleteIndex, its store still there) rather than
leaving it to DeleteLogStore (`deleted_with`): a store deletion that fails then leaves no
index in SLS that the state has forgotten, which a revert could not create again. It indexes
the full text and, as text fields, the ones the node-log page's queries name (INDEXED_FIELDS):
`__tag__:__hostname__`, and the journal's `_HOSTNAME` and `_TRANSPORT`. Index traffic is billed
by SLS with the data written (unpriced in the cost book).

Further stores on demand (`NodeLogs.store`): `functions`, where the stack's Function Compute
functions write (the queue-metric publisher).

Outputs: `project_name`, `store_names` (store -> name), `machine_group_name`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import LOG_FILE
from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra_facts.allowed import LOG_ENCRYPT_TYPE, LOG_TEXT_FIELD
from gpu_infra_facts.types import LOG_PROJECT

STORES = ("bootstrap", "system")
"""The log stores of a stack's project."""
FUNCTION_STORE = "functions"
"""The store of the stack's Function Compute functions (the queue-metric publisher), made
when a function writes there (NodeLogs.store)."""


@dataclass(frozen=True)
class LogTarget:
    """Where a service writes its logs: a store of the stack's project."""

    project: pulumi.Input[str]
    store: pulumi.Input[str]


INDEXED_FIELDS = ("__tag__:__hostname__", "_HOSTNAME", "_TRANSPORT")
"""The fields every store indexes for field queries (`name: value`), as text (LOG_TEXT_FIELD):
the host tag LoongCollector adds to each log and the systemd journal's host and transport
(kernel messages have `_TRANSPORT` kernel)."""
INDEX_TOKENS = ", '\";=()[]{}?@&<>/:\n\t\r"
"""The delimiters a text index splits on (the SLS console's default set)."""
ACK_MACHINE_GROUP = "k8s-group-{cluster_id}"
"""The machine group an ACK cluster's log add-on creates in the project it is given (ACK
"Collect container logs": logtail-ds / loongcollector with sls_project_name; the name is
UNCONFIRMED for the loongcollector add-on, documented for logtail-ds)."""
INTRANET_ENDPOINT = "{region}-intranet.log.aliyuncs.com"
"""The SLS endpoint inside the region (the provider's pipeline example uses this form)."""


class NodeLogs(pulumi.ComponentResource):
    """The stack's SLS project, stores and collection of the nodes' logs: stores keep
    `retention_days`, encrypted at rest with an SLS-managed key when `encrypt` (the layouts
    pass the stack's kms_encryption, on in prod; the stack's own KMS key would need a RAM
    role SLS assumes, `user_cmk_info.arn`, which is not built); nodes announcing `machine_id` are
    collected. The project and its stores are protected with the stack's data
    (`conventions.protect_data`) and replaced delete-first (`fixed_name`: the project's name
    is unique across SLS, a store's in its project)."""

    TYPE = "gpu-infra:logs:NodeLogs"
    project: alicloud.log.Project
    stores: dict[str, alicloud.log.Store]
    indexes: dict[str, alicloud.log.StoreIndex]
    machine_group: alicloud.log.MachineGroup

    def __init__(self, name: str, *, machine_id: str, retention_days: int, encrypt: bool,
                 conventions: Conventions, opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        self._name, self._retention_days, self._encrypt = name, retention_days, encrypt
        self._kept = kept = pulumi.ResourceOptions(parent=self,
                                                   protect=conventions.protect_data)
        project_name = conventions.unique_name(LOG_PROJECT, name)
        self.project = alicloud.log.Project(
            child_name(name, "project"), project_name=project_name,
            description=f"Node logs of {name}",
            tags=conventions.tags_for(child_name(name, "project")),
            opts=pulumi.ResourceOptions.merge(fixed_name(self), kept))
        self.stores: dict[str, alicloud.log.Store] = {}
        self.indexes: dict[str, alicloud.log.StoreIndex] = {}
        self.store_names: dict[str, pulumi.Output[str]] = {}
        for store in STORES:
            self.store(store)
        self.machine_group = alicloud.log.MachineGroup(
            child_name(name, "nodes"), project=self.project.project_name, name="nodes",
            identify_type="userdefined", identify_lists=[machine_id],
            opts=pulumi.ResourceOptions(parent=self))
        inputs = {
            "bootstrap": {"Type": "input_file", "FilePaths": json.dumps([LOG_FILE])},
            "system": {"Type": "service_journal", "Kernel": "true"},
        }
        self.pipelines: dict[str, alicloud.sls.LogtailPipelineConfig] = {}
        for store, source in inputs.items():
            pipeline = self.pipelines[store] = alicloud.sls.LogtailPipelineConfig(
                child_name(name, f"{store}-collection"), project=self.project.project_name,
                config_name=store, inputs=[source],
                flushers=[{"Type": "flusher_sls", "Logstore": self.stores[store].logstore_name,
                           "TelemetryType": "logs", "Region": conventions.region,
                           "Endpoint": INTRANET_ENDPOINT.format(region=conventions.region)}],
                opts=pulumi.ResourceOptions(parent=self))
            alicloud.log.LogTailAttachment(
                child_name(name, f"{store}-nodes"), project=self.project.project_name,
                logtail_config_name=pipeline.config_name,
                machine_group_name=self.machine_group.name,
                opts=pulumi.ResourceOptions(parent=self))
        self.project_name: pulumi.Output[str] = self.project.project_name
        self.machine_group_name: pulumi.Output[str] = self.machine_group.name
        self.register_outputs({"project_name": self.project_name,
                               "store_names": self.store_names,
                               "machine_group_name": self.machine_group_name})

    def store(self, store: str) -> LogTarget:
        """The store `store` of the project (made on first use, kept and encrypted like the
        others, `<name>-<store>`, indexed: `<name>-<store>-index`), as a LogTarget."""
        if store not in self.stores:
            self.stores[store] = alicloud.log.Store(
                child_name(self._name, store), project_name=self.project.project_name,
                logstore_name=store, retention_period=self._retention_days,
                encrypt_conf=alicloud.log.StoreEncryptConfArgs(
                    enable=True, encrypt_type=LOG_ENCRYPT_TYPE) if self._encrypt else None,
                opts=pulumi.ResourceOptions.merge(fixed_name(self), self._kept))
            self.store_names[store] = self.stores[store].logstore_name
            self.indexes[store] = alicloud.log.StoreIndex(
                child_name(self._name, f"{store}-index"), project=self.project.project_name,
                logstore=self.stores[store].logstore_name,
                full_text=alicloud.log.StoreIndexFullTextArgs(token=INDEX_TOKENS),
                field_searches=[alicloud.log.StoreIndexFieldSearchArgs(
                    name=field, type=LOG_TEXT_FIELD, token=INDEX_TOKENS)
                    for field in INDEXED_FIELDS],
                opts=pulumi.ResourceOptions(parent=self, replace_with=[self.stores[store]]))
        return LogTarget(self.project.project_name, self.store_names[store])

    def collect_from(self, name: str, *, machine_group: pulumi.Input[str],
                     stores: tuple[str, ...] = ("system",)) -> None:
        """Also apply the pipelines of `stores` to `machine_group` (an ACK cluster's, which
        its log add-on creates as ACK_MACHINE_GROUP): the nodes of a cluster announce no
        gpu-infra id and run no gpu-infra bootstrap, so they send the system journal only."""
        for store in stores:
            alicloud.log.LogTailAttachment(
                child_name(name, f"{store}-nodes"), project=self.project.project_name,
                logtail_config_name=self.pipelines[store].config_name,
                machine_group_name=machine_group, opts=pulumi.ResourceOptions(parent=self))

