"""A sandbox to run the generated bootstrap under bash: every external command a node would run
(nvidia-smi, curl, modprobe, systemctl, mount, lsblk, the installers, the cloud API helper) is a
stand-in that records its arguments in calls.log and plays a small fake node kept in state/.

Knobs (files under state/): `gpus` (GPUs the fake node shows after the driver install),
`fail-auto-install`, `fail-loongcollector`, `no-erdma` (the eRDMA install yields no
device), `nvswitch`; the container runtime's in tests/container_standins.py (`gpu-infra-api
pull` runs the node's own client, its gpu_infra_pull part, except for the stack's registry,
whose login it plays); the node's model server on 127.0.0.1: `serving-polls` (how many polls
it refuses before it answers), `serving-fails` and `serving-waits` (the line its unit leaves
in serving.error, serving.waiting), or, with `node-address` (this node's own loopback address,
127.x.y.z) and `node-ports`, a real server there: curl's requests to 127.0.0.1 on those ports
go to it, to other ports (the stand-in cloud) as they are; `sleep-seconds` (every sleep takes
that long instead of none). A unit with a runner script in units/<unit> (the test writes it)
runs when systemctl starts or restarts it, in its own process group (units/<unit>.pid). Data
disks are attached with `attach_disk` (metadata disks/<serial>/name and a /dev/disk/by-id
link), at boot or on the first `sleep` (a disk attached after the instance boots).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gpu_infra.blocks.bootstrap import BootstrapSpec, trust_names, unpack_user_data, user_data
from gpu_infra_facts import container_runtime

from .container_standins import DAEMON_LOAD, DOCKER, NVIDIA_CTK, PACKAGE_INSTALLS

HOSTNAME = "t01-gpu-node-000"
SCRATCH_SERIAL = "2ze0scratch000000001"
"""The serial of the sandbox's default `scratch` disk (its id is d-<serial>)."""
INSTANCE_TYPE = "ecs.gn8v-8x.48xlarge"
TRUST = trust_names("t01-gpu", None)
USER_KEY_PARAMETER, HOST_KEY_PARAMETER = TRUST.user_key, TRUST.host_key
"""The sandbox fleet's trust parameters (the stand-in API's `secret` reads secrets/<name>)."""

OS_RELEASES = {"ubuntu-22.04": 'ID=ubuntu\nVERSION_ID="22.04"\nVERSION_CODENAME=jammy\n',
               "ubuntu-24.04": 'ID=ubuntu\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\n',
               "alinux-3": 'ID="alinux"\nVERSION_ID="3"\n'}
"""/etc/os-release of the supported systems (the fields the node reads)."""

RECORD = 'echo "${0##*/} $*" >> "$SANDBOX/calls.log"\n'
"""The first line of every stand-in: its name and arguments to calls.log. The stand-ins keep
to bash's builtins and expansions where they can (they run hundreds of times a boot)."""
STAND_INS: dict[str, str] = {
    "curl": r'''
given=("$@") out="" url=""
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift 2 ;; -X|-H) shift 2 ;; -*) shift ;; *) url=$1; shift ;; esac
done
case $url in
  http://100.100.100.200/latest/api/token) echo sandbox-token; exit ;;
  http://100.100.100.200/latest/meta-data/*)
    item=${url#http://100.100.100.200/latest/meta-data/}
    if [ -d "$SANDBOX/meta/$item" ]; then ls -1 "$SANDBOX/meta/$item"; exit; fi
    cat "$SANDBOX/meta/$item"; exit ;;
  http://127.0.0.1:*)  # the node's model server, or the stand-in cloud
    if [ -f "$SANDBOX/state/node-address" ]; then
      port=${url#http://127.0.0.1:} address=127.0.0.1
      ! grep -qx "${port%%/*}" "$SANDBOX/state/node-ports" ||
        address=$(cat "$SANDBOX/state/node-address")
      exec /usr/bin/curl "${given[@]/127.0.0.1:/$address:}"
    fi
    [ ! -f "$SANDBOX/state/serving-fails" ] ||
      cp "$SANDBOX/state/serving-fails" "$GPU_INFRA_ROOT/var/lib/gpu-infra/serving.error"
    [ ! -f "$SANDBOX/state/serving-waits" ] ||
      cp "$SANDBOX/state/serving-waits" "$GPU_INFRA_ROOT/var/lib/gpu-infra/serving.waiting"
    left=0
    [ ! -f "$SANDBOX/state/serving-polls" ] || read -r left < "$SANDBOX/state/serving-polls"
    if [ "$left" -gt 0 ] || [ -f "$SANDBOX/state/serving-fails" ]; then
      echo $((left - 1)) > "$SANDBOX/state/serving-polls"
      echo "curl: (7) Failed to connect to 127.0.0.1 port ${url##*:}" >&2; exit 7
    fi
    exit 0 ;;
esac
case $url in
  */auto_install_v4.0.sh) script=auto_install ;;
  */env_setup.sh) script=env_setup ;;
  *agent_install_ecs*) script=cms_installer ;;
  */loongcollector.sh) script=loongcollector ;;
  *cuda-keyring*|*erdma_installer-*|*/gpg|*/gpgkey) script=none ;;
  *) echo "unexpected download $url" >&2; exit 22 ;;
esac
if [ "$script" = none ]; then : > "$out"; else cp "$SANDBOX/installers/$script.sh" "$out"; fi
''',
    "nvidia-smi": r'''
if [ ! -f "$SANDBOX/state/driver" ]; then
  echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."; exit 9
fi
read -r gpus < "$SANDBOX/state/gpus"
if [ "$gpus" -eq 0 ]; then echo "No devices were found"; exit 6; fi
fields=${1#--query-gpu=} mig=Disabled ecc=0
read -r driver < "$SANDBOX/state/driver"
[ ! -f "$SANDBOX/state/mig" ] || read -r mig < "$SANDBOX/state/mig"
[ ! -f "$SANDBOX/state/ecc" ] || read -r ecc < "$SANDBOX/state/ecc"
for ((i = 0; i < gpus; i++)); do
  if [ -f "$SANDBOX/state/lost-gpu-$i" ]; then
    echo "Unable to determine the device handle for GPU0000:0$i:00.0: Unknown Error"; continue
  fi
  row=""
  for field in ${fields//,/ }; do
    case $field in
      index) value=$i ;;
      uuid) value=GPU-0000000$i-aaaa-bbbb ;;
      driver_version) value=$driver ;;
      mig.mode.current) value=$mig ;;
      ecc.errors.uncorrected.volatile.total) value=$ecc ;;
    esac
    row="$row${row:+, }$value"
  done
  echo "$row"
done
[ -f "$SANDBOX/state/smi-status" ] && exit "$(cat "$SANDBOX/state/smi-status")"
exit 0
''',
    "journalctl": 'cat "$SANDBOX/state/kernel-log" 2>/dev/null || true\n',
    "systemctl": DAEMON_LOAD + r'''
case "$1" in
  is-active) [ -f "$SANDBOX/state/active-${!#}" ] ;;
  enable) [ "$2" = --now ] && touch "$SANDBOX/state/active-$3"; exit 0 ;;
  start|restart) [ "${!#}" = gpu-infra-bootstrap.service ] ||
    touch "$SANDBOX/state/active-${!#}"
    runner=$SANDBOX/units/${!#} pid=$SANDBOX/units/${!#}.pid
    [ -f "$runner" ] || exit 0
    if [ -f "$pid" ] && kill -0 "$(cat "$pid")" 2>/dev/null; then
      [ "$1" = restart ] || exit 0
      kill -- "-$(cat "$pid")"
    fi
    setsid bash "$runner" </dev/null >>"$runner.log" 2>&1 &
    echo $! > "$pid" ;;
esac
''',
    "mountpoint": '[ ! -f "$SANDBOX/state/hung-mount" ] || exec /bin/sleep 600\n'
                  'point=${!#}; [ -f "$SANDBOX/state/mounted${point//\\//_}" ]\n',
    "umount": 'point=${!#}; rm -f "$SANDBOX/state/mounted${point//\\//_}"\n',
    "dnf": PACKAGE_INSTALLS,
    "update-initramfs": "exit 0\n",
    "mount": 'point=${!#}; touch "$SANDBOX/state/mounted${point//\\//_}"\n',
    "sleep": 'if [ -f "$SANDBOX/on-sleep" ]; then bash "$SANDBOX/on-sleep"; '
             'rm -f "$SANDBOX/on-sleep"; fi\n'
             '[ ! -f "$SANDBOX/state/sleep-seconds" ] || '
             'exec /bin/sleep "$(cat "$SANDBOX/state/sleep-seconds")"\n',
    "xfs_growfs": "exit 0\n",
    "blkid": r'''
disk=${!#}
case "$*" in
  *UUID*) echo "uuid-${disk##*/}" ;;
  *) [ -f "$SANDBOX/state/formatted-${disk##*/}" ] || exit 2 ;;
esac
''',
    "mkfs.xfs": 'disk=${!#}; touch "$SANDBOX/state/formatted-${disk##*/}"\n',
    "pgrep": '[ -f "$SANDBOX/state/agent" ]\n',
    "modinfo": '[ "$1" = nvidia_peermem ] || { [ "$1" = erdma ] && '
               '[ -d "$GPU_INFRA_ROOT/sys/class/infiniband" ]; }\n',
    "nv-fabricmanager": '[ -f "$SANDBOX/state/fm" ] && '
                        'echo "Fabric Manager version is : $(cat "$SANDBOX/state/fm")"\n',
    "apt-get": PACKAGE_INSTALLS,
    "docker": DOCKER,
    "nvidia-ctk": NVIDIA_CTK,
    "dpkg": "exit 0\n",
    "modprobe": '[ "$*" != "-r nouveau" ] || [ ! -f "$SANDBOX/state/nouveau-busy" ]\n',
    "ip": 'mkdir -p "$GPU_INFRA_ROOT/sys/class/net/eth0"; echo "${!#}" > '
          '"$GPU_INFRA_ROOT/sys/class/net/eth0/mtu"\n',
    "eadm": "exit 0\n",
    "hostname": f"echo {HOSTNAME}\n",
    "ssh-keygen": r'''
while [ $# -gt 0 ]; do [ "$1" = -f ] && key=$2; shift; done
read -r kind name < "$key" && [ "$kind" = PRIVATE ] && echo "ssh-ed25519 PUB$name"
''',
    "gpu-infra-api": r'''
case $1 in
  peers) cat "$SANDBOX/peers.tsv" ;;
  secret) cat "$SANDBOX/secrets/$2" ;;
  oss-get) if [ -f "$SANDBOX/objects/$3" ]; then cp "$SANDBOX/objects/$3" "$4"
           else cp "$SANDBOX/grid.run" "$4"; fi ;;
  gpu-check) [ ! -f "$SANDBOX/state/no-$2" ] ;;
  event) cp "$4" "$SANDBOX/event-$2.stderr" ;;
  pull)
    host=${2%%/*}
    if grep -qx "REGISTRY_ENDPOINT=$host" "$GPU_INFRA_ROOT/opt/gpu-infra/config.sh"; then
      # the stack's registry: the node client would ask the cloud for its login token, which
      # tests/test_registry_login.py plays on loopback; here the login and one pull
      { cat "$SANDBOX/registry-password" 2>/dev/null || true; } |
        docker login --username cr_temp_user --password-stdin "$host" >/dev/null &&
        exec docker pull --quiet "$2" >/dev/null
      exit 1
    fi
    exec python3 "$GPU_INFRA_ROOT/opt/gpu-infra/bin/gpu-infra-api" pull "$2" ;;
esac
''',
}
"""Stand-in bodies (each also records its call)."""

INSTALLERS: dict[str, str] = {
    "auto_install": r'''
echo "auto_install $*" >> "$SANDBOX/calls.log"
if [ -f "$SANDBOX/state/fail-auto-install" ]; then
  echo "INSTALL FAIL" > auto_install.log; exit 1
fi
echo "ALL INSTALL OK" > auto_install.log
echo "$1" > "$SANDBOX/state/driver"
''',
    "env_setup": r'''
echo "env_setup $*" >> "$SANDBOX/calls.log"
[ -f "$SANDBOX/state/no-erdma" ] && exit 0
for i in 0 1; do
  mkdir -p "$GPU_INFRA_ROOT/sys/class/infiniband/erdma_$i/ports/1" "$GPU_INFRA_ROOT/dev/infiniband"
  touch "$GPU_INFRA_ROOT/dev/infiniband/uverbs$i"
  echo "4: ACTIVE" > "$GPU_INFRA_ROOT/sys/class/infiniband/erdma_$i/ports/1/state"
done
''',
    "cms_installer": r'''
echo "cms_installer ARGUS_VERSION=$ARGUS_VERSION" >> "$SANDBOX/calls.log"
touch "$SANDBOX/state/agent"
''',
    "loongcollector": r'''
echo "loongcollector $*" >> "$SANDBOX/calls.log"
[ -f "$SANDBOX/state/fail-loongcollector" ] && exit 1
mkdir -p "$GPU_INFRA_ROOT/usr/local/ilogtail"
printf '#!/bin/sh\n' > "$GPU_INFRA_ROOT/usr/local/ilogtail/loongcollector"
chmod 755 "$GPU_INFRA_ROOT/usr/local/ilogtail/loongcollector"
''',
}


@dataclass
class Run:
    """One run's exit code and what it left behind."""

    code: int
    output: str
    sandbox: Path

    @property
    def calls(self) -> list[str]:
        log = self.sandbox / "calls.log"
        return log.read_text().splitlines() if log.exists() else []

    def commands(self) -> list[str]:
        """The first word of every recorded call."""
        return [call.split(" ", 1)[0] for call in self.calls]

    def file(self, path: str) -> str:
        return (self.sandbox / "root" / path.lstrip("/")).read_text()

    def exists(self, path: str) -> bool:
        return (self.sandbox / "root" / path.lstrip("/")).exists()

    def api_calls(self) -> list[str]:
        return [call for call in self.calls if call.startswith("gpu-infra-api")]


class Sandbox:
    """A fake node under `directory`: install the user data, then run the bootstrap."""

    def __init__(self, directory: Path, gpus: int = 8,
                 peers: tuple[tuple[str, ...], ...] = (), scratch: bool = True,
                 os_release: str = OS_RELEASES["ubuntu-22.04"]):
        """`scratch`: attach the default `scratch` disk at boot (SCRATCH_SERIAL, vdb);
        `os_release`: the node's /etc/os-release."""
        self.dir = directory
        self.extra_env: dict[str, str] = {}
        """Variables added to every run's environment (e.g. PROBE_SECONDS)."""
        self.root = directory / "root"
        self.state = directory / "state"
        bin_dir = directory / "bin"
        for path in (self.root / "etc/ssh/ssh_config.d", self.root / "etc/profile.d",
                     self.state, bin_dir, directory / "meta/instance", directory / "installers"):
            path.mkdir(parents=True, exist_ok=True)
        (self.root / "etc/fstab").write_text("")
        (self.root / "etc/hosts").write_text("127.0.0.1 localhost\n")
        (self.root / "etc/os-release").write_text(os_release)
        module = self.root / "sys/module/nvidia"
        module.mkdir(parents=True)
        (module / "version").symlink_to(self.state / "driver")  # loaded while state/driver is
        (self.root / "etc/ssh/ssh_host_ed25519_key").write_text("PRIVATE own-host-key\n")
        (self.state / "gpus").write_text(f"{gpus}\n")
        for name, body in STAND_INS.items():
            stand_in = bin_dir / name
            stand_in.write_text("#!/bin/bash\n" + RECORD + body)
            stand_in.chmod(0o755)
        for name, body in INSTALLERS.items():
            (directory / "installers" / f"{name}.sh").write_text(body)
        meta = directory / "meta"
        (meta / "source-address").write_text("http://mirrors.cloud.aliyuncs.com\n")
        (meta / "instance/instance-type").write_text(INSTANCE_TYPE)
        (meta / "vswitch-cidr-block").write_text("10.1.0.0/24")
        rows = peers or ((HOSTNAME, "10.1.0.10", "healthy"),)
        (directory / "peers.tsv").write_text("".join(
            f"{host}\t{ip}\t{health}\t{kind}\n"
            for host, ip, health, *rest in rows for kind in [rest[0] if rest else INSTANCE_TYPE]))
        self.set_secret(USER_KEY_PARAMETER, "user-key")
        self.set_secret(HOST_KEY_PARAMETER, "host-key")
        if scratch:
            self.attach_disk("scratch", SCRATCH_SERIAL, "vdb")

    def set_secret(self, parameter: str, name: str) -> None:
        """Encrypted parameter `parameter` holds the stand-in private key `name` (ssh-keygen
        -y prints `ssh-ed25519 PUB<name>` for it)."""
        (self.dir / "secrets").mkdir(exist_ok=True)
        (self.dir / "secrets" / parameter).write_text(f"PRIVATE {name}\n")

    def attach_disk(self, name: str, serial: str, device: str, *, late: bool = False,
                    link: str = "virtio-{serial}") -> None:
        """Attach disk `name` (ECS disk name) with `serial` as /dev/`device`: in instance
        metadata and under /dev/disk/by-id (`link`); `late`: on the node's first sleep."""
        by_id = self.root / "dev/disk/by-id"
        script = (f'mkdir -p "$SANDBOX/meta/disks/{serial}" "{by_id}"\n'
                  f'echo {name} > "$SANDBOX/meta/disks/{serial}/name"\n'
                  f'touch "{self.root}/dev/{device}"\n'
                  f'ln -sf "{self.root}/dev/{device}" "{by_id}/{link.format(serial=serial)}"\n')
        if late:
            (self.dir / "on-sleep").write_text(script)
        else:
            subprocess.run(["bash", "-c", script], env=self.env(), check=True)

    def preinstalled(self, driver: str) -> None:
        """What a baked image carries: the NVIDIA `driver` (loaded), the CloudMonitor agent,
        Docker and the NVIDIA Container Toolkit at their pins."""
        self.knob("driver", driver)
        self.knob("agent")
        self.knob("docker-version", container_runtime.DOCKER_VERSION)
        self.knob("ctk-version", container_runtime.NVIDIA_CTK_VERSION)

    def knob(self, name: str, value: str = "") -> None:
        """Set a fake-node knob (see the module docstring)."""
        (self.state / name).write_text(f"{value}\n" if value else "")

    def env(self) -> dict[str, str]:
        return {"PATH": f"{self.dir / 'bin'}:/usr/bin:/bin", "SANDBOX": str(self.dir),
                "GPU_INFRA_ROOT": str(self.root),
                "GPU_INFRA_API": str(self.dir / "bin/gpu-infra-api"), "HOME": str(self.dir),
                **self.extra_env}

    def install(self, spec: BootstrapSpec) -> Run:
        """Run the user data (writes the files, enables and starts the unit)."""
        return self.install_text(user_data(spec))

    def install_text(self, text: str) -> Run:
        """Run user data given as text (e.g. a planned resource's)."""
        return self.run_script(text, "user-data.sh")

    def run_script(self, text: str, name: str) -> Run:
        """Run shell `text` saved as `name` in the sandbox directory."""
        script = self.dir / name
        script.write_text(text)
        return self._bash(str(script))

    def boot(self, *args: str) -> Run:
        """Run /opt/gpu-infra/bootstrap.sh, as the unit does at every boot."""
        return self._bash(str(self.root / "opt/gpu-infra/bootstrap.sh"), *args)

    def run(self, path: str) -> Run:
        """Run an installed program (e.g. /opt/gpu-infra/bin/gpu-infra-peers)."""
        return self._bash(str(self.root / path.lstrip("/")))

    def _bash(self, *command: str) -> Run:
        done = subprocess.run(["bash", *command], env=self.env(), capture_output=True,
                              text=True, timeout=60, check=False)
        return Run(done.returncode, done.stdout + done.stderr, self.dir)


class Snapshot:
    """`sandbox`'s files as they are now (a node booted once), put back by `restore` for each
    test that starts from them. They stay at the sandbox's own path (the node's files name it);
    a test process runs its tests one at a time."""

    def __init__(self, sandbox: Sandbox):
        self.sandbox = sandbox
        self.saved = sandbox.dir.with_name(sandbox.dir.name + ".snapshot")
        shutil.copytree(sandbox.dir, self.saved, symlinks=True)

    def restore(self) -> Sandbox:
        """The sandbox as it was when taken (its extra_env empty again)."""
        shutil.rmtree(self.sandbox.dir)
        shutil.copytree(self.saved, self.sandbox.dir, symlinks=True)
        self.sandbox.extra_env = {}
        return self.sandbox


def clear_calls(sandbox: Sandbox) -> None:
    """Forget the calls recorded so far."""
    log = sandbox.dir / "calls.log"
    if log.exists():
        os.remove(log)


def script_of(user_data_text: str) -> str:
    """The node script planned user data runs (AssertionError if it is not gpu-infra's)."""
    script = unpack_user_data(user_data_text)
    assert script is not None, user_data_text[:200]
    return script


def planned_steps(script: str, mode: str = "node") -> list[str]:
    """The steps user data (its config.sh: NODE_STEPS) or a bake copy of bootstrap.sh (its
    main's `run_steps` line) runs in `mode` (node or bake)."""
    script = unpack_user_data(script) or script
    if mode == "bake":
        return next(line.split()[1:] for line in script.splitlines()
                    if line.startswith("run_steps ") and "NODE_STEPS" not in line)
    steps = next((line for line in script.splitlines()
                  if line.startswith("readonly -a NODE_STEPS=(")), "")
    return steps.removeprefix("readonly -a NODE_STEPS=(").removesuffix(")").split()
