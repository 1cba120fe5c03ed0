# Node logs to SLS: LoongCollector ships the bootstrap log and the systemd journal (kernel
# messages included) to the stack's project. LOG_ID, written to LoongCollector's
# user-defined id file, is what puts this node in the stack's machine group (and no
# other's). Logs are an aid, not a duty: a node whose collector cannot be installed stays
# healthy and says so in its bootstrap log (its journal, too, stays on the node).

# step_logs_install: the collector, installed unless present (what a baked image carries).
step_logs_install() {
  local installer
  [ ! -x "$ROOT$LC_BINARY" ] || return 0
  installer=$(mktemp)
  # the plain region id installs the variant that ships over the region's intranet
  if [ "$INSTALL" != 1 ] || ! { curl -fsS --retry 5 -o "$installer" "$LC_URL" &&
                                verify_sha256 "LoongCollector's installer" "$installer" "" &&
                                sh "$installer" install "$REGION"; }; then
    log "WARNING: no LoongCollector: this node's logs stay on the node"
  fi
  rm -f "$installer"
}

# step_logs: the stack's machine-group id, then the collector; the line names the instance,
# so its logs can be found by instance id.
step_logs() {
  mkdir -p "$ROOT${LC_ID_FILE%/*}"
  echo "$LOG_ID" > "$ROOT$LC_ID_FILE"
  log "node $(meta instance-id) logs as host $(hostname) in machine group $LOG_ID"
  step_logs_install
}
