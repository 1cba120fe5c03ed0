# The render worker (render farms with a `worker`): gpu-infra-render.service takes jobs from the
# fleet's job queue once the node is ready (it waits for the readiness check's `ready`) and
# renders each in the worker's image. The node tools bring its program, unit and settings
# ($ETC_DIR/render.json); this step checks that the container runtime and the settings are
# there and (re)starts the unit, at every boot and when a re-run brings new settings.
step_render_worker() {
  docker --version >/dev/null 2>&1 ||
    fail "render worker: no docker on the node (the container_runtime step installs it)"
  [ -f "$ETC_DIR/render.json" ] ||
    fail "render worker: no $ETC_DIR/render.json (the node tools write it)"
  systemctl enable gpu-infra-render.service
  systemctl restart --no-block gpu-infra-render.service
  log "render worker started (gpu-infra-render.service: journalctl -u gpu-infra-render)"
}
