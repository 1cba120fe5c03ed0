"""A GPU image built by ECS Image Builder from the nodes' own bootstrap (blocks.bootstrap
`bake_tasks`): image components holding the tasks, an image template (pipeline) listing them,
and one build (execution) of it.

Every input of the three resources forces replacement (provider ForceNew), and the template's
name and the image prefix carry a digest of the content and the settings, so a changed
install makes a new template and a new build beside the old image: no fleet's image changes
until its stack file names the new one. `pulumi up` returns once the build has started (the
provider waits for PREPARING or BUILDING, not for the image); the build itself takes 30-60
minutes (an estimate: the documented 10-20 minute install, a reboot, eRDMA, fabric manager,
the agent and the snapshot).
"""

from __future__ import annotations

import hashlib
from io import StringIO

import pulumi
import pulumi_alicloud as alicloud
from ruamel.yaml import YAML
from ruamel.yaml.scalarstring import LiteralScalarString

from gpu_infra.blocks.bootstrap import BakeTask
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.schema.image import ImageBuildConfig
from gpu_infra_facts.allowed import (
    BASE_IMAGE_TYPE,
    IMAGE_BUILD_BANDWIDTH_MBPS,
    IMAGE_COMPONENT_TYPE,
    IMAGE_SYSTEM_TYPE,
)
from gpu_infra_facts.image_builder import (
    COMPONENT_CONTENT_MAX_BYTES,
    COMPONENT_NAME,
    MAX_COMMANDS,
    TEMPLATE_MARK,
)

DIGEST_CHARS = 8
"""Hex characters of the content digest in the template's name and the image prefix."""


def task_document(task: BakeTask) -> dict[str, object]:
    """One task in Image Builder's YAML component format: RunShellCommand, or Reboot."""
    if task.command is None:
        return {"Name": task.name, "Action": "Reboot", "Properties": {"forceStop": False}}
    if TEMPLATE_MARK in task.command:
        raise ValueError(f"task {task.name}: {TEMPLATE_MARK} would be read as an Image "
                         "Builder parameter")
    return {"Name": task.name, "Action": "RunShellCommand",
            "Properties": {"commandContent": LiteralScalarString(task.command)}}


def component_content(tasks: list[BakeTask]) -> str:
    """The YAML content of one image component running `tasks` in order."""
    yaml = YAML()
    yaml.width = 4096
    out = StringIO()
    yaml.dump({"Tasks": [task_document(task) for task in tasks]}, out)
    return out.getvalue()


def content_size(text: str) -> int:
    """Bytes of a component's content (the 16 KB limit)."""
    return len(text.encode("utf-8"))


def pack_components(tasks: list[BakeTask]) -> list[str]:
    """The tasks split, in order, into as few components as fit Image Builder's 16 KB and
    127-command limits; ValueError if one task alone does not fit."""
    contents: list[str] = []
    current: list[BakeTask] = []
    for task in tasks:
        candidate = [*current, task]
        if current and (content_size(component_content(candidate)) >
                        COMPONENT_CONTENT_MAX_BYTES or len(candidate) > MAX_COMMANDS):
            contents.append(component_content(current))
            candidate = [task]
        current = candidate
    contents.append(component_content(current))
    for text in contents:
        if content_size(text) > COMPONENT_CONTENT_MAX_BYTES:
            raise ValueError(f"an image component is {content_size(text)} bytes, over Image "
                             f"Builder's limit of {COMPONENT_CONTENT_MAX_BYTES}")
    return contents


def content_digest(contents: list[str], config: ImageBuildConfig) -> str:
    """Short digest of what the build installs and how (names the template and the image),
    so an edit that replaces the template also renames it. The settings are dumped whole,
    defaults included, so a field added to them renames every image stack's template unless
    left out here: `driver.grid_package_grant` (an image bakes no GRID package)."""
    text = "\n".join([*contents, config.model_dump_json(
        exclude={"driver": {"grid_package_grant"}})])
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]


class GpuImageBuild(pulumi.ComponentResource):
    """Image components, the image template and its build, for `config`.

    Attributes: `component_ids`, `pipeline_id`, `execution_id`, `image_name_prefix` (what the
    built image's name starts with), `digest`.
    """

    def __init__(self, name: str, *, config: ImageBuildConfig, tasks: list[BakeTask],
                 base_image_id: pulumi.Input[str], vswitch_id: pulumi.Input[str],
                 conventions: Conventions, opts: pulumi.ResourceOptions | None = None):
        """`tasks`: the bake (blocks.bootstrap.bake_tasks); `base_image_id`: the image the
        build starts from; `vswitch_id`: where the build instance runs."""
        super().__init__("gpu-infra:compute:GpuImageBuild", name, None, opts)
        contents = pack_components(tasks)
        self.digest = content_digest(contents, config)
        template = f"{name}-{self.digest}"
        self.image_name_prefix = config.image_name_prefix or template
        child = pulumi.ResourceOptions(parent=self)
        components = []
        for index, content in enumerate(contents):
            component_name = f"{name}-bake-{index}"
            display = f"GpuInfra-{component_name}-{self.digest}"
            assert COMPONENT_NAME.match(display), display
            components.append(alicloud.ecs.EcsImageComponent(
                component_name, content=content, component_type=IMAGE_COMPONENT_TYPE,
                system_type=IMAGE_SYSTEM_TYPE, image_component_name=display,
                description=f"gpu-infra bake of {name}, part {index + 1} of {len(contents)}",
                tags=conventions.tags_for(component_name), opts=child))
        self.component_ids = [component.id for component in components]
        build_content = pulumi.Output.all(*self.component_ids).apply(
            lambda ids: "\n".join(f"COMPONENT {component_id}" for component_id in ids))
        self.pipeline = alicloud.ecs.EcsImagePipeline(
            f"{name}-template", name=template, base_image_type=BASE_IMAGE_TYPE,
            base_image=base_image_id, build_content=build_content,
            instance_type=config.instance_type, vswitch_id=vswitch_id,
            system_disk_size=config.system_disk_gib,
            internet_max_bandwidth_out=IMAGE_BUILD_BANDWIDTH_MBPS,
            image_name=self.image_name_prefix,
            delete_instance_on_failure=config.delete_instance_on_failure,
            add_accounts=config.share_with_accounts or None,
            to_region_ids=config.copy_to_regions or None,
            description=f"gpu-infra GPU image {name}: driver, eRDMA, fabric manager, agent",
            tags=conventions.tags_for(f"{name}-template"),
            # tags force a new template (provider ForceNew), and so a new build: a tag edit
            # keeps the template's first tags rather than rebuilding the image
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["tags"]))
        self.pipeline_id = self.pipeline.id
        self.execution = alicloud.ecs.ImagePipelineExecution(
            f"{name}-build", image_pipeline_id=self.pipeline.id, opts=child)
        self.execution_id = self.execution.id
        self.register_outputs({"pipeline_id": self.pipeline_id,
                               "execution_id": self.execution_id,
                               "image_name_prefix": self.image_name_prefix})


__all__ = ["GpuImageBuild"]
