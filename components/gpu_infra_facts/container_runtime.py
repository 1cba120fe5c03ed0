"""The container runtime of ECS GPU nodes: Docker Engine with the NVIDIA Container Toolkit,
their pinned versions, the intranet mirrors the nodes install them from, and the image the
readiness gate starts a container from (sources inline; checked 2026-12-03). UNCONFIRMED marks
what no primary source states.

Docker Engine over containerd with nerdctl: the `docker` CLI and `docker.service` are what the
NVIDIA toolkit configures in one command (`nvidia-ctk runtime configure --runtime=docker`) and
what the user's own scripts and the seeds' articles use; `docker run --gpus all` asks the
toolkit for every GPU, and `--device /dev/infiniband` passes the eRDMA devices. Docker runs
containerd underneath, so nothing is lost; nerdctl is not packaged in the systems' or Docker's
repositories (GitHub release tarballs only), which the nodes' intranet mirrors do not carry.
"""

from __future__ import annotations

from gpu_infra_facts.jobs import UpstreamImage

MIRRORS = "http://mirrors.cloud.aliyuncs.com"
"""Alibaba's intranet mirror site, reached from a VPC without internet access (the driver step's
`source-address`; Alibaba's OOS template ACS::ECS::InstallDockerCE installs docker-ce from it)."""
DOCKER_VERSION = "28.5.2"
"""Docker Engine (docker-ce, docker-ce-cli), released 2025-11-05 with the runc fixes of
CVE-2025-31133, -52565 and -52881 (docker/docs content/manuals/engine/release-notes/28.md).
Package versions: `5:<version>-1~ubuntu.<VERSION_ID>~<VERSION_CODENAME>` on Ubuntu (Docker's
"Install Docker Engine on Ubuntu", specific version), `<version>` on dnf."""
DOCKER_MIRROR = f"{MIRRORS}/docker-ce"
"""Docker's repositories on the intranet mirror: `linux/ubuntu` (apt, key `linux/ubuntu/gpg`)
and `linux/rhel/8/x86_64/stable` for Alibaba Cloud Linux 3, which is RHEL 8 compatible (key
`linux/rhel/gpg`). Alibaba's ACS::ECS::InstallDockerCE (aliyun/oos-templates) takes
`linux/centos` with dnf-plugin-releasever-adapter; Docker builds no CentOS 8 packages since
its EOL, so the RHEL 8 tree is used (UNCONFIRMED that the mirror carries 28.5.2 there)."""
NVIDIA_CTK_VERSION = "1.19.1"
"""NVIDIA Container Toolkit: nvidia-container-toolkit, nvidia-container-toolkit-base,
libnvidia-container-tools and libnvidia-container1, all at this version (NVIDIA's install
guide pins the four together; tag v1.19.1 of NVIDIA/nvidia-container-toolkit). Package
version `<version>-1` on apt, `<version>` on dnf."""
NVIDIA_CTK_MIRROR = f"{MIRRORS}/libnvidia-container"
"""NVIDIA's libnvidia-container repository (nvidia.github.io/libnvidia-container) on the
mirror: flat repositories `stable/deb/$(ARCH)` and `stable/rpm/x86_64`, key `gpgkey`
(mirrors.aliyun.com/libnvidia-container is the public face; the same path on the intranet
host is UNCONFIRMED)."""
DAEMON_CONFIG = "/etc/docker/daemon.json"
"""What `nvidia-ctk runtime configure --runtime=docker` writes (its default for docker,
cmd/nvidia-ctk/runtime/configure/configure.go); docker reads it at start."""
RUNTIME_ERROR_EXIT = 125
"""`docker run`'s exit status when the daemon refuses the container (no GPU driver, image not
found, daemon down); 126 and 127: the command cannot run; otherwise the container's own
status (docker/cli cli/command/container/run.go)."""
PULL_TRIES = 5
"""Attempts of one `docker pull` by gpu-infra-pull, 2, 4, 8 and 16 s apart (a registry outage
of about half a minute is ridden out; longer fails with one line)."""
CHECK_SECONDS = 300
"""How long the readiness gate's container check may take, pull included."""

CHECK_IMAGE = UpstreamImage(
    "docker.io/library/ubuntu:jammy-20251013", "ubuntu:jammy-20251013",
    "the readiness gate's container: `nvidia-smi -L` (which the NVIDIA toolkit mounts into any "
    "glibc image given --gpus) and `ls /dev/infiniband`; a dated tag of Docker's official "
    "image, about 30 MB (UNCONFIRMED size)")
NODE_IMAGES: tuple[UpstreamImage, ...] = (CHECK_IMAGE,)
"""Every image gpu-infra's ECS node code pulls besides the user's own: copied into the stack's
registry before `pulumi up` (images_to_mirror). Add a workload's default image here."""


__all__ = ["CHECK_IMAGE", "CHECK_SECONDS", "DAEMON_CONFIG", "DOCKER_MIRROR", "DOCKER_VERSION",
           "MIRRORS", "NODE_IMAGES", "NVIDIA_CTK_MIRROR", "NVIDIA_CTK_VERSION", "PULL_TRIES",
           "RUNTIME_ERROR_EXIT"]
