"""The model server on ECS inference nodes (`serving` on platform ecs): the unit that runs it,
how its model reaches the node, how long a new node may take to serve, and the HTTP health
check the load balancer runs against it.

Sources:
- Docker CLI `docker run` (docker/cli cli/command/container/opts.go): `--gpus all` with the
  NVIDIA Container Toolkit, `--ipc host`, `--network host`, `-v SRC:DST:ro`; `--rm` and
  `--restart` conflict ("Conflicting options: --restart and --rm", opts.go), so the unit, not
  Docker, restarts the server (systemd.service `Restart=always`).
- vLLM "Using Docker" (docs.vllm.ai deployment/docker): the server needs the host's shared
  memory (`--ipc=host` or `--shm-size`) for tensor-parallel workers.
- coreutils `sha256sum` (GNU coreutils manual, "sha2 utilities"): each line of its output is
  the 64 hex digits, a space, a space (text) or `*` (binary), the file name; `sha256sum -c`
  reads the same format. The model's manifest is that output, so a user makes it with the
  tool every system has.
- OSS GetObject (alibabacloud.com/help/en/oss/developer-reference/getobject): the ETag of an
  object uploaded in parts is not its MD5, and Content-MD5 is returned only when the uploader
  sent one; x-oss-hash-crc64ecma covers every object, but CRC-64 in Python 3.6 without a C
  library runs at a few MB/s. A SHA-256 manifest (hashlib, C speed) checks every byte of
  every file, whoever uploaded it and however.
- pulumi-alicloud nlb.ServerGroupHealthCheckArgs (terraform-provider-alicloud
  resource_alicloud_nlb_server_group.go at 81c43b67: `health_check_http_code` a list of
  http_2xx, http_3xx, http_4xx, http_5xx, default http_2xx; `http_check_method` GET or HEAD)
  and alb.ServerGroupHealthCheckConfigArgs (`health_check_codes`, `health_check_method`).
- ESS "Use lifecycle hooks to ensure service availability" (alibabacloud.com/help/en/
  auto-scaling/user-guide/use-lifecycle-hooks-to-ensure-service-availability): with a
  scale-out lifecycle hook, ESS adds a new instance to the load balancer's server groups
  only once the hook ends; so the readiness hook is the grace period, and the node answers
  it CONTINUE only after its server answers the readiness path.
"""

from __future__ import annotations

import re

UNIT = "gpu-infra-serving.service"
"""The systemd unit that runs the model server on every node of the fleet."""
CONTAINER = "gpu-infra-serving"
"""The server container's name (the unit removes a leftover one before it starts)."""
MANIFEST = "SHA256SUMS"
"""The model's manifest under its prefix in the models bucket: `sha256sum` output, one line
per file of the model (paths relative to the prefix)."""
MODEL_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*){0,7}$")
"""A model's prefix in the models bucket (`chat`, `llama-3-8b/v2`): one to eight path parts
of letters, digits, `.`, `_`, `-`, none starting with a dot (so never `..`)."""
HEALTHY_HTTP_CODES = ("http_2xx",)
"""What the load balancer counts as healthy: a 2xx answer of the readiness path (vLLM's
/health and Triton's /v2/health/ready answer 200 once the model is loaded)."""
HTTP_CHECK_METHOD = "GET"
"""The health check's HTTP method (GET or HEAD; the servers answer GET)."""

IMAGE_GIB = 12
"""Assumed compressed size of the server image: vllm/vllm-openai:latest is about 12 GB to pull
(vllm-project/vllm issue 27154, 2025-10; 5 GB in 2024, issue 7609)."""
MODEL_GIB = 16
"""Assumed model size: Meta-Llama-3-8B-Instruct in bfloat16, four safetensors shards of
16.1 GB in all (its Hugging Face file list)."""
TRANSFER_MIB_PER_SECOND = 50
"""Assumed throughput of one node's image pull (ACR over the VPC endpoint, layers unpacked
on the way) and of its model download (OSS internal endpoint, one stream): UNCONFIRMED
without an account, chosen low (an ESSD PL1 system disk writes 350 MB/s)."""
LOAD_SECONDS = 300
"""Assumed time the server takes to load the model onto the GPUs and answer (UNCONFIRMED)."""
START_SECONDS = 1800
"""How long a node's server may take from its unit's start to its first healthy answer: the
assumed pull, download and load (IMAGE_GIB and MODEL_GIB at TRANSFER_MIB_PER_SECOND, then
LOAD_SECONDS: about 860 s) with twice that as margin, rounded up to 30 minutes. Added to
the readiness hook's heartbeat timeout of a serving fleet."""
POLL_SECONDS = 10
"""How often the serving step asks the server's readiness path while it waits."""


def expected_start_seconds() -> int:
    """The assumed pull, download and load time of a new node's server (see START_SECONDS)."""
    transfer = (IMAGE_GIB + MODEL_GIB) * 1024 // TRANSFER_MIB_PER_SECOND
    return transfer + LOAD_SECONDS


__all__ = ["CONTAINER", "HEALTHY_HTTP_CODES", "HTTP_CHECK_METHOD", "IMAGE_GIB", "LOAD_SECONDS",
           "MANIFEST", "MODEL_GIB", "MODEL_PREFIX", "POLL_SECONDS", "START_SECONDS",
           "TRANSFER_MIB_PER_SECOND", "UNIT", "expected_start_seconds"]
