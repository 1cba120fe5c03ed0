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
  installer=$(mktemp)
  curl -fsS --retry 5 -o "$installer" "$CMS_INSTALLER_URL"
  ARGUS_VERSION=$CMS_AGENT_VERSION bash "$installer"
  rm -f "$installer"
  agent_running || fail "the CloudMonitor agent is not running after its install"
}
