# The CloudMonitor agent, from the region's internal OSS endpoint: it publishes the GPU, memory
# and disk metrics the fleet's alarms watch.
agent_running() {
  pgrep -f /usr/local/cloudmonitor/bin/argusagent >/dev/null
}

step_cloudmonitor() {
  local installer
  if agent_running; then
    log "CloudMonitor agent running"
    return 0
  fi
  if [ "$INSTALL" != 1 ]; then  # the image's agent may still be starting
    for _ in 1 2 3 4 5 6; do
      sleep 10
      agent_running && return 0
    done
  fi
  may_install "the CloudMonitor agent"
  installer=$(mktemp)
  curl -fsS --retry 5 -o "$installer" "$CMS_INSTALLER_URL"
  verify_sha256 "the CloudMonitor installer" "$installer" ""
  ARGUS_VERSION=$CMS_AGENT_VERSION bash "$installer"
  rm -f "$installer"
  agent_running || fail "the CloudMonitor agent is not running after its install"
}
