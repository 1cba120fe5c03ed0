# gpu-infra step runner: runs the steps in order, stops at a requested reboot and resumes after
# it, and reports the outcome. Sourced into bootstrap.sh after config.sh and probe.sh.
#
#   run_steps STEP...     step_STEP of each in order; each step's stderr is kept in
#                         $STATE_DIR/steps/STEP.err (and copied to the log); a failing command
#                         stops the run (set -e) and the EXIT trap marks the node unhealthy
#                         with the step's name and the tail of its stderr. After a step that
#                         asked for a reboot nothing else runs: the runner reboots (node) or
#                         stops for the image build's Reboot task (bake), exit 0.
#   request_reboot WHY    ask for a reboot once the current step returns (at most
#                         MAX_REBOOTS until a run finishes, 1 in an image build; then the
#                         step fails). An installer's own `reboot` / `shutdown` becomes this
#                         request (a PATH shim), so nothing runs while the machine goes down.
#   expect_reboot         the next command may reboot the machine by itself: a SIGTERM until
#                         the step returns is that reboot, not a failure
#   run_installer CMD...  CMD (an installer that may reboot), in its own session: once it
#                         has asked for a reboot (the shim) it has REBOOT_GRACE_SECONDS to
#                         return, then it is stopped and the request stands (an installer
#                         that waits for its own reboot would stall the run)
#   may_install WHAT      stop unless this fleet installs software (route preinstalled: the
#                         image must already carry WHAT)
#   report STATUS STEP    the node's state to the cloud side: its health tag, a CloudMonitor
#                         event (the failing step and its stderr) and, in a scaling group, its
#                         readiness for the scale-out (gpu-infra-api answer-scale-out)
# State: a run removes `ready` and `unhealthy` as it starts (a configuration re-run, MODE
# rerun, keeps `ready` until its health step writes it anew); the health step writes `ready`,
# a failed run `unhealthy` (its step): with neither, a run is going or stopped for a reboot.
# Bash runs the EXIT trap on SIGTERM with status 0 unless TERM has its own trap: on_term exits
# 143, so a stop during a step is told from a finished run.
EXPECT_REBOOT=0
MODE=${1:-node}
REBOOT_MARK=$STATE_DIR/reboot-requested

may_install() {
  [ "$INSTALL" = 1 ] || fail "$1 is missing from the image (route preinstalled installs nothing)"
}

report() {
  local status=$1 step=$2 err=$STATE_DIR/steps/$2.err
  "$API" tag "$HEALTH_TAG_KEY=$status" || log "could not tag the instance $status"
  [ -f "$err" ] || err=/dev/null
  "$API" event "$status" "$step" "$err" || log "could not send the CloudMonitor event"
  if [ -n "${LIFECYCLE_HOOK_ID:-}" ]; then
    "$API" answer-scale-out || log "could not answer the scale-out"
  fi
  log "reported $status ($step)"
}

on_term() {
  log "stopped by SIGTERM"
  exit 143
}

on_exit() {
  local code=$? err=$STATE_DIR/steps/$CURRENT_STEP.err
  [ "$code" -eq 0 ] && return 0
  if [ "$code" -eq 143 ] && { [ "$EXPECT_REBOOT" = 1 ] || [ -f "$REBOOT_MARK" ]; }; then
    log "stopped by the reboot $CURRENT_STEP asked for; resuming at the next boot"
    exit 0
  fi
  if [ -s "$err" ]; then
    tail -n 20 "$err" | sed 's/^/  | /' | tee -a "$LOG_FILE" >&3
  fi
  log "FAILED (exit $code): the node is unhealthy"
  rm -f "$STATE_DIR/ready"
  printf '%s\n' "$CURRENT_STEP" > "$STATE_DIR/unhealthy"
  [ "$MODE" = bake ] || report unhealthy "$CURRENT_STEP"
}

expect_reboot() {
  EXPECT_REBOOT=1
}

request_reboot() {
  echo "$1" > "$REBOOT_MARK"
  log "reboot requested: $1"
}

# reboot_shims: an installer's `reboot` or `shutdown -r` only records the request; the runner
# reboots once the step has returned (node) or leaves it to the image build's Reboot task.
reboot_shims() {
  local shim=$STATE_DIR/shim-bin command
  mkdir -p "$shim"
  for command in reboot shutdown; do
    printf '#!/bin/sh\necho "%s $*: deferred" >&2\necho "%s by an installer" > "%s"\n' \
      "$command" "$command" "$REBOOT_MARK" > "$shim/$command"
    chmod 755 "$shim/$command"
  done
  PATH=$shim:$PATH
}

REBOOT_GRACE_SECONDS=${REBOOT_GRACE_SECONDS:-60}
run_installer() {
  local pid waited=0
  setsid "$@" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ -f "$REBOOT_MARK" ]; then
      if [ "$waited" -ge "$REBOOT_GRACE_SECONDS" ]; then
        log "$1 still runs ${waited}s after asking for its reboot: stopped"
        kill -TERM -- "-$pid" 2>/dev/null || true
        wait "$pid" || true
        return 0
      fi
      waited=$((waited + 1))
    fi
    sleep 1
  done
  wait "$pid"
}

# run_step NAME: never called in a condition (that would turn set -e off inside the step).
run_step() {
  local err=$STATE_DIR/steps/$1.err
  CURRENT_STEP=$1
  log "start"
  "step_$1" 2> "$err"
  EXPECT_REBOOT=0
  [ ! -s "$err" ] || sed 's/^/  | /' "$err" | tee -a "$LOG_FILE" >&3
  touch "$STATE_DIR/steps/$1.ok"
  log "ok"
}

stop_for_reboot() {
  local why count=0 limit=$MAX_REBOOTS
  why=$(cat "$REBOOT_MARK")
  [ -f "$STATE_DIR/reboots" ] && count=$(cat "$STATE_DIR/reboots")
  [ "$MODE" != bake ] || limit=1
  if [ "$count" -ge "$limit" ]; then
    rm -f "$REBOOT_MARK"
    fail "$why: still so after $count reboot(s)"
  fi
  echo $((count + 1)) > "$STATE_DIR/reboots"
  log "stopping for the reboot ($why); the next run resumes"
  if [ "$MODE" != bake ]; then
    systemctl reboot
  fi
  exit 0
}

run_steps() {
  local step
  mkdir -p "$STATE_DIR/steps" "$ETC_DIR"
  rm -f "$STATE_DIR/steps/"*.ok "$STATE_DIR/steps/"*.err "$REBOOT_MARK" "$STATE_DIR/unhealthy"
  [ "$MODE" = rerun ] || rm -f "$STATE_DIR/ready"
  [ -f "$STATE_DIR/first-boot" ] || date +%s > "$STATE_DIR/first-boot"
  trap on_exit EXIT
  trap on_term TERM
  reboot_shims
  log "gpu-infra bootstrap ($MODE) of fleet $FLEET"
  for step in "$@"; do
    run_step "$step"
    [ ! -f "$REBOOT_MARK" ] || stop_for_reboot
  done
  rm -f "$STATE_DIR/reboots"
  CURRENT_STEP=finished
  log "bootstrap finished"
}
