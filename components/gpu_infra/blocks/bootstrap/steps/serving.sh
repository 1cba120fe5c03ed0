# The model server (inference fleets with `serving`, ECS): gpu-infra-serving.service runs
# gpu-infra-serve (model, image, container; the node tools install them). The step starts the
# unit, or restarts it when its files changed since the step last started it, and waits until
# the server answers its readiness path on this node: the health step, and with it the
# scale-out answer after which ESS adds the node to the load balancer, follows a server that
# serves. A model or image that cannot be had fails the step at once (serving.error); a model
# not uploaded yet is waited for (serving.waiting), as long as the server's start may take.
step_serving() {
  local stamp=$STATE_DIR/serving.sha256 error=$STATE_DIR/serving.error digest url waited=0
  local waiting=$STATE_DIR/serving.waiting
  digest=$(cat "$ETC_DIR/serving.env" "$ROOT/etc/systemd/system/gpu-infra-serving.service" \
    "$BIN_DIR/gpu-infra-serve" | sha256sum)
  rm -f "$error" "$waiting"
  systemctl enable gpu-infra-serving.service
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
    systemctl start gpu-infra-serving.service
  else
    systemctl restart gpu-infra-serving.service
  fi
  printf '%s\n' "$digest" > "$stamp"
  url=http://127.0.0.1:$SERVING_PORT$SERVING_READY_PATH
  until curl -fsS -o /dev/null --max-time 5 "$url"; do
    [ ! -s "$error" ] || fail "the model server cannot start: $(cat "$error")"
    [ "$waited" -lt "$SERVING_START_SECONDS" ] ||
      fail "the model server did not answer $url in ${SERVING_START_SECONDS}s:" \
        "$(cat "$waiting" 2>/dev/null || echo "journalctl -u gpu-infra-serving")"
    sleep "$SERVING_POLL_SECONDS"
    waited=$((waited + SERVING_POLL_SECONDS))
  done
  log "the model server answers $url (${waited}s)"
}
