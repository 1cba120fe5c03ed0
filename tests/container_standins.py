"""Stand-ins for the container runtime's commands (`docker`, `nvidia-ctk`) in the node sandbox
(tests/bootstrap_sandbox.py adds them to its stand-ins), speaking the real tools' formats and
exit codes, and a reader of the `docker run` calls they record.

Sources of the formats: docker/cli (`docker --version`: "Docker version X, build Y",
cli/command/system/version.go; `docker run` exits 125 when the daemon refuses the container,
126/127 when the command cannot run, else the container's status, cli/command/container/run.go;
"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon
running?" and `docker pull -q` printing the reference), moby/moby (the "could not select device
driver" refusal of --gpus without the nvidia runtime, daemon/devices.go; "No such image"),
NVIDIA/nvidia-container-toolkit (`nvidia-ctk --version`: "NVIDIA Container Toolkit CLI version
X" then "commit: ..."; `runtime configure` writes the runtime into daemon.json and logs with
logrus' text format on a non-terminal, `level=info msg="Wrote updated config to ..."`; an error
is logged and exits 1, cmd/nvidia-ctk/main.go).

Fake node state (under state/): `docker-version` and `ctk-version` (installed by the apt-get and
dnf stand-ins from the pinned package specifications), `active-docker` (the daemon runs;
systemctl's stand-in loads daemon.json into `docker-daemon.json` when it (re)starts docker),
`docker-images/` (pulled images), `docker-logins/<host>` (the user logged in; `docker login
--password-stdin` checks the password against `registry-password` in the sandbox directory,
and pulls from the host in `registry-host` need that login; where the sandbox directory has
`registry-images/`, an image of that host is there only once a file named as the image is, else
the pull fails as for a tag nobody pushed, moby's "manifest unknown"), knobs `container-gpus`
(GPUs a container sees, default `gpus`), `pull-failures` (the next N pulls fail as with an
unreachable registry),
`registry-down` (every pull fails). Each `docker run` appends its arguments to
docker-runs.log (docker_runs reads them). A container's command other than the readiness gate's
(`nvidia-smi -L`, `ls /dev/infiniband`) runs `containers/<image as a file name>` when the test
put one there (with the container's arguments and DOCKER_VOLUMES, its `--volume` values, in
its environment), else exits 0. A container's processes form a process group of their own;
one run with `--name` can be stopped (`docker stop [--time N]`: SIGTERM to its main process,
SIGKILL after N s, default 10, and its other processes end with it) and removed (`docker rm
--force`: SIGKILL; without --force a running container is refused); a name that runs nothing
is "No such container", exit 1, except for `rm --force`, which docker/cli's container/rm.go
lets pass.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

DOCKER = r'''
state=$SANDBOX/state
[ -f "$state/docker-version" ] || { echo "docker: command not found" >&2; exit 127; }
if [ "$1" = --version ]; then
  echo "Docker version $(cat "$state/docker-version"), build e180ab8"; exit 0
fi
daemon="Error response from daemon:"
ref() { printf '%s' "$1" | tr '/:@' '___'; }
down() {
  echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock." \
    "Is the docker daemon running?" >&2
  exit "$1"
}
pull_one() {
  local left=0 host=${1%%/*}
  if [ "$host" = "$(cat "$SANDBOX/registry-host" 2>/dev/null)" ] &&
    [ ! -f "$state/docker-logins/$host" ]; then
    echo "$daemon pull access denied for ${1%:*}, repository does not exist or may require" \
      "'docker login': denied: requested access to the resource is denied" >&2
    return 1
  fi
  if [ "$host" = "$(cat "$SANDBOX/registry-host" 2>/dev/null)" ] &&
    [ -d "$SANDBOX/registry-images" ] && [ ! -f "$SANDBOX/registry-images/$(ref "$1")" ]; then
    echo "$daemon manifest for $1 not found: manifest unknown: manifest unknown" >&2
    return 1
  fi
  [ ! -f "$state/pull-failures" ] || left=$(cat "$state/pull-failures")
  if [ -f "$state/registry-down" ] || [ "$left" -gt 0 ]; then
    [ "$left" -eq 0 ] || echo $((left - 1)) > "$state/pull-failures"
    echo "$daemon Get \"https://${1%%/*}/v2/\": dial tcp: i/o timeout" >&2
    return 1
  fi
  mkdir -p "$state/docker-images" && touch "$state/docker-images/$(ref "$1")"
}
command=$1
shift
case $command in
  pull)
    [ -f "$state/active-docker" ] || down 1
    [ "$1" != --quiet ] && [ "$1" != -q ] || shift
    pull_one "$1" || exit 1
    echo "$1" ;;
  login)
    [ -f "$state/active-docker" ] || down 1
    user="" host=""
    while [ $# -gt 0 ]; do
      case $1 in
        -u|--username) user=$2; shift 2 ;;
        --password-stdin) shift ;;
        *) host=$1; shift ;;
      esac
    done
    password=$(cat)
    if [ "$password" != "$(cat "$SANDBOX/registry-password" 2>/dev/null)" ]; then
      echo "$daemon Get \"https://$host/v2/\": unauthorized: authentication required" >&2
      exit 1
    fi
    mkdir -p "$state/docker-logins" && echo "$user" > "$state/docker-logins/$host"
    echo "Login Succeeded" ;;
  image)
    [ -f "$state/active-docker" ] || down 1
    [ "$1" = inspect ] || exit 0
    [ -f "$state/docker-images/$(ref "$2")" ] || { echo "Error: No such image: $2" >&2; exit 1; }
    echo "[{\"RepoTags\": [\"$2\"]}]" ;;
  run)
    { printf '%q ' "$@"; echo; } >> "$SANDBOX/docker-runs.log"
    [ -f "$state/active-docker" ] || down 125
    gpus="" devices="" volumes="" name=""
    while [ $# -gt 0 ]; do
      case $1 in
        --gpus) gpus=$2; shift 2 ;;
        --device) devices="$devices $2"; shift 2 ;;
        -v|--volume) volumes="$volumes $2"; shift 2 ;;
        --name) name=$2; shift 2 ;;
        -e|--env|--env-file|--network|--net|--ipc|--entrypoint|-w|--workdir|\
-p|--publish|--mount|--shm-size|--ulimit|--restart|--pull|--label|-l|-u|--user|--cap-add|\
--security-opt|--cpus|--memory|--log-driver|--log-opt|--stop-timeout|--health-cmd) shift 2 ;;
        -*) shift ;;
        *) break ;;
      esac
    done
    image=$1
    shift
    if [ ! -f "$state/docker-images/$(ref "$image")" ]; then
      echo "Unable to find image '$image' locally" >&2
      pull_one "$image" || { echo "docker: $daemon pull failed" >&2; exit 125; }
    fi
    if [ -n "$gpus" ] && ! grep -qs '"nvidia"' "$state/docker-daemon.json"; then
      echo "docker: $daemon could not select device driver \"\" with capabilities: [[gpu]]." >&2
      exit 125
    fi
    for device in $devices; do
      [ -e "$GPU_INFRA_ROOT$device" ] || {
        echo "docker: $daemon error gathering device information while adding custom" \
          "device \"$device\": no such file or directory." >&2
        exit 125
      }
    done
    case "$*" in
      "nvidia-smi -L")
        if [ -z "$gpus" ]; then
          echo "docker: $daemon exec: \"nvidia-smi\": executable file not found in \$PATH" >&2
          exit 127
        fi
        count=$(cat "$state/container-gpus" 2>/dev/null || cat "$state/gpus")
        for i in $(seq 0 $((count - 1))); do
          echo "GPU $i: NVIDIA H20 (UUID: GPU-0000000$i-aaaa-bbbb)"
        done ;;
      "ls /dev/infiniband")
        case " $devices " in
          *" /dev/infiniband "*) ls "$GPU_INFRA_ROOT/dev/infiniband" ;;
          *) echo "ls: cannot access '/dev/infiniband': No such file or directory" >&2; exit 2 ;;
        esac ;;
      *)
        hook=$SANDBOX/containers/$(ref "$image")
        export DOCKER_VOLUMES="$volumes"
        [ -f "$hook" ] || exit 0
        # the container: a process group of its own (its processes, as its PID namespace
        # holds them), named by its leader for stop and rm; waited for as `docker run` waits,
        # 128+N when signal N ended it, as docker reports
        set -m
        bash "$hook" "$@" &
        container=$!
        set +m
        [ -z "$name" ] || echo "$container" > "$state/running-$name"
        wait "$container" 2>/dev/null ;;
    esac ;;
  stop|rm)
    [ -f "$state/active-docker" ] || down 1
    force=0 grace=10
    while [ $# -gt 1 ]; do
      case $1 in
        --force|-f) force=1 ;;
        --time|-t) grace=$2; shift ;;
      esac
      shift
    done
    pid=$(cat "$state/running-$1" 2>/dev/null) || pid=""
    if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "$daemon No such container: $1" >&2
      [ "$command $force" = "rm 1" ] && exit 0
      exit 1
    fi
    if [ "$command $force" = "rm 0" ]; then  # moby daemon/delete.go
      echo "$daemon cannot remove container \"/$1\": container is running: stop the" \
        "container before removing or force remove" >&2
      exit 1
    fi
    rm -f "$state/running-$1"
    # stop: SIGTERM to the container's main process, SIGKILL once --time (default 10 s)
    # has passed; rm --force: SIGKILL at once. The main process gone, the kernel kills every
    # other process of the container's PID namespace (here: its process group).
    if [ "$command" = stop ]; then
      kill -TERM "$pid"
      ticks=$((grace * 20))
      while [ "$ticks" -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
        sleep 0.05
        ticks=$((ticks - 1))
      done
    fi
    kill -KILL -- "-$pid" 2>/dev/null
    echo "$1" ;;
  *)
    [ -f "$state/active-docker" ] || down 1 ;;
esac
'''
"""`docker`: --version, login, pull [-q], image inspect, run (the options gpu-infra and the
workloads pass; the readiness gate's commands answered; others by the test's hook), stop,
rm [--force]."""

NVIDIA_CTK = r'''
state=$SANDBOX/state
[ -f "$state/ctk-version" ] || { echo "nvidia-ctk: command not found" >&2; exit 127; }
if [ "$1" = --version ]; then
  printf 'NVIDIA Container Toolkit CLI version %s\ncommit: 5bc0312\n' "$(cat "$state/ctk-version")"
  exit 0
fi
logged() { echo "time=\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\" level=$1 msg=\"$2\"" >&2; }
[ "$1 $2" = "runtime configure" ] || { logged error "unsupported arguments: $*"; exit 1; }
runtime=docker config=/etc/docker/daemon.json
for arg in "$@"; do
  case $arg in --runtime=*) runtime=${arg#*=} ;; --config=*) config=${arg#*=} ;; esac
done
[ "$runtime" = docker ] || { logged error "unrecognized runtime '$runtime'"; exit 1; }
mkdir -p "$(dirname "$config")"
python3 - "$config" <<'PY' || { logged error "unable to load config for runtime docker"; exit 1; }
import json, os, sys
path = sys.argv[1]
config = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
config.setdefault("runtimes", {})["nvidia"] = {"args": [], "path": "nvidia-container-runtime"}
with open(path, "w") as out:
    json.dump(config, out, indent=4)
PY
logged info "Wrote updated config to $config"
logged info "It is recommended that docker daemon be restarted."
'''
"""`nvidia-ctk`: --version, runtime configure --runtime=docker [--config=PATH]."""

PACKAGE_INSTALLS = r'''
for spec in "$@"; do
  case $spec in
    docker-ce=*) v=${spec#*:}; echo "${v%%-*}" > "$SANDBOX/state/docker-version" ;;
    docker-ce-[0-9]*) echo "${spec#docker-ce-}" > "$SANDBOX/state/docker-version" ;;
    nvidia-container-toolkit=*) v=${spec#*=}; echo "${v%%-*}" > "$SANDBOX/state/ctk-version" ;;
    nvidia-container-toolkit-[0-9]*)
      echo "${spec#nvidia-container-toolkit-}" > "$SANDBOX/state/ctk-version" ;;
  esac
done
'''
"""What apt-get and dnf do with the runtime's pinned package specifications (appended to
their stand-ins): `docker-ce=5:28.5.2-1~ubuntu.22.04~jammy` or `docker-ce-28.5.2` installs
Docker 28.5.2, likewise the toolkit."""

DAEMON_LOAD = ('case "$*" in "restart docker"|"start docker"|"enable --now docker") '
               'cp "$GPU_INFRA_ROOT/etc/docker/daemon.json" "$SANDBOX/state/docker-daemon.json" '
               '2>/dev/null || true ;; esac\n')
"""systemctl's stand-in: docker reads daemon.json when it (re)starts."""

VALUE_OPTIONS = frozenset({
    "--gpus", "--device", "-v", "--volume", "-e", "--env", "--env-file", "--network", "--net",
    "--ipc", "--name", "--entrypoint", "-w", "--workdir", "-p", "--publish", "--mount",
    "--shm-size", "--ulimit", "--restart", "--pull", "--label", "-l", "-u", "--user",
    "--cap-add", "--security-opt", "--cpus", "--memory", "--log-driver", "--log-opt",
    "--stop-timeout", "--health-cmd"})
"""Options of `docker run` that take a value (the stand-in's list)."""


@dataclass
class DockerRun:
    """One recorded `docker run`: its options (name -> values, in order), flags, image and
    the container's command."""

    options: dict[str, list[str]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    image: str = ""
    command: list[str] = field(default_factory=list)


def docker_runs(sandbox_dir: Path) -> list[DockerRun]:
    """Every `docker run` of the sandbox in `sandbox_dir` (docker-runs.log: each run's
    arguments, shell-quoted), parsed."""
    runs = []
    log = sandbox_dir / "docker-runs.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        words, run = shlex.split(line), DockerRun()
        while words and words[0].startswith("-"):
            option = words.pop(0)
            if "=" in option:
                name, value = option.split("=", 1)
                run.options.setdefault(name, []).append(value)
            elif option in VALUE_OPTIONS:
                run.options.setdefault(option, []).append(words.pop(0))
            else:
                run.flags.append(option)
        run.image, run.command = words[0], words[1:]
        runs.append(run)
    return runs
