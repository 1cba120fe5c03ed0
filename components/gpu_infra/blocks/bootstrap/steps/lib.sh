# gpu-infra bootstrap library: logging, the step runner, metadata and health reporting.
# Sourced into bootstrap.sh after the configuration block; GPU_INFRA_ROOT (empty on a node)
# lets the tests run everything inside a sandbox directory.
ROOT=${GPU_INFRA_ROOT:-}
STATE_DIR=$ROOT/var/lib/gpu-infra
LOG_DIR=$ROOT/var/log/gpu-infra
LOG_FILE=$LOG_DIR/bootstrap.log
BIN_DIR=$ROOT/opt/gpu-infra/bin
ETC_DIR=$ROOT/etc/gpu-infra
API=${GPU_INFRA_API:-$BIN_DIR/gpu-infra-api}
CURRENT_STEP=start
EXPECT_REBOOT=0
MODE=${1:-node}

log() {
  printf '%s [%s] %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$CURRENT_STEP" "$*" | tee -a "$LOG_FILE" >&2
}

fail() {
  log "ERROR: $*"
  exit 1
}

# meta ITEM: one instance metadata item, in hardened mode (a session token first: the nodes
# run with http_tokens required, so metadata answers only token requests).
meta() {
  local token
  token=$(curl -fsS --retry 5 --retry-delay 2 -X PUT "$METADATA_TOKEN_URL" \
    -H "X-aliyun-ecs-metadata-token-ttl-seconds: 300")
  curl -fsS --retry 5 --retry-delay 2 -H "X-aliyun-ecs-metadata-token: $token" \
    "$METADATA_URL/$1"
}

# may_install WHAT: stop unless this fleet installs software (DRIVER_ROUTE preinstalled: the
# image must already carry WHAT; a node never downloads it).
may_install() {
  [ "$INSTALL" = 1 ] || fail "$1 is missing from the image (route preinstalled installs nothing)"
}

# pkg_install PACKAGE...: install with the OS package manager.
pkg_install() {
  if command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
  else
    dnf install -y -q "$@"
  fi
}

# report STATUS STEP: make the node's state visible to the cloud side: an instance tag and,
# in a scaling group, the scale-out lifecycle action (CONTINUE when healthy, else ABANDON).
report() {
  local status=$1 step=$2 result=CONTINUE
  [ "$status" = healthy ] || result=ABANDON
  "$API" tag "$HEALTH_TAG_KEY=$status" || log "could not tag the instance $status"
  if [ -n "$LIFECYCLE_HOOK_ID" ]; then
    "$API" complete-lifecycle "$result" || log "could not complete the lifecycle action"
  fi
  log "reported $status ($step)"
}

on_exit() {
  local code=$?
  [ "$code" -eq 0 ] && return 0
  if [ "$EXPECT_REBOOT" = 1 ]; then
    log "interrupted by the reboot the step asked for; the bootstrap resumes at the next boot"
    return 0
  fi
  log "FAILED (exit $code): the node is unhealthy"
  rm -f "$STATE_DIR/ready"
  printf '%s\n' "$CURRENT_STEP" > "$STATE_DIR/unhealthy"
  [ "$MODE" = bake ] || report unhealthy "$CURRENT_STEP"
}

# run_step NAME: run step_NAME; any failing command stops the bootstrap (set -e) and the EXIT
# trap marks the node unhealthy with the step's name.
run_step() {
  CURRENT_STEP=$1
  log "start"
  "step_$1"
  touch "$STATE_DIR/steps/$1.ok"
  log "ok"
}

# defer_reboots: in an image build the template's Reboot task restarts the instance, so an
# installer's own `reboot` or `shutdown -r` only leaves a note for the next run.
defer_reboots() {
  local shim=$STATE_DIR/bake-bin command
  mkdir -p "$shim"
  for command in reboot shutdown; do
    printf '#!/bin/sh\necho "%s $*: deferred to the Reboot task of the image build" >&2\n' \
      "$command" > "$shim/$command"
    chmod 755 "$shim/$command"
  done
  PATH=$shim:$PATH
}

start_bootstrap() {
  mkdir -p "$STATE_DIR/steps" "$LOG_DIR" "$ETC_DIR"
  rm -f "$STATE_DIR/steps/"*.ok
  trap on_exit EXIT
  [ "$MODE" != bake ] || defer_reboots
  log "gpu-infra bootstrap ($MODE) of fleet $FLEET"
}
