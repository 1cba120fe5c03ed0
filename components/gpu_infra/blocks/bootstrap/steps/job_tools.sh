# The node tools (the GPU health check and its timer on every ECS fleet with contacts; the
# elastic launcher gpu-infra-torchrun, gpu-infra-resume and, on spot fleets, the spot watcher
# on training fleets; the NVLink check) are too large for the user data: the stack keeps
# their installer in one of its buckets, the user data pins its key, whose name is its
# sha256, and every boot fetches, checks and runs it (it writes the files and enables the
# timer and the watcher). The step runs early, so the health timer also reports a bootstrap
# that fails later.
step_node_tools() {
  local installer=$STATE_DIR/node-tools.sh sha=${NODE_TOOLS_OBJECT##*/}
  "$API" oss-get "$NODE_TOOLS_BUCKET" "$NODE_TOOLS_OBJECT" "$installer"
  verify_sha256 "the node tools" "$installer" "${sha%.sh}"
  GPU_INFRA_ROOT=$ROOT bash "$installer"
}
