# Training nodes reach each other: each node has its own SSH key and publishes only the public
# halves (its key and host key) as instance tags; gpu-infra-peers (at boot, every 2 minutes and
# at job start) lists the fleet's healthy nodes and writes the hostfile, the torchrun
# environment, authorized_keys and known_hosts. No secret is in the Pulumi state or user data,
# and no node list is in the user data: adding or removing nodes changes nothing on the others.
step_cluster_ssh() {
  local key=$ROOT/root/.ssh/id_ed25519 host_key=$ROOT/etc/ssh/ssh_host_ed25519_key.pub
  mkdir -p "$ROOT/root/.ssh"
  chmod 700 "$ROOT/root/.ssh"
  [ -f "$key" ] || ssh-keygen -q -t ed25519 -N '' -C "gpu-infra $(hostname)" -f "$key"
  [ -f "$host_key" ] || fail "no ed25519 host key at /etc/ssh/ssh_host_ed25519_key.pub"
  "$API" tag "$SSH_KEY_TAG_KEY=$(cut -d ' ' -f 2 "$key.pub")" \
    "$HOST_KEY_TAG_KEY=$(cut -d ' ' -f 2 "$host_key")"
  printf 'GlobalKnownHostsFile /etc/gpu-infra/known_hosts /etc/ssh/ssh_known_hosts\n' \
    > "$ROOT/etc/ssh/ssh_config.d/gpu-infra.conf"
  systemctl enable gpu-infra-peers.timer
}

# step_cluster_peers: after the health check (only a healthy node takes a rank); exit 75 is
# gpu-infra-peers waiting for the rest of the fleet, which the timer retries every 2 minutes.
step_cluster_peers() {
  "$BIN_DIR/gpu-infra-peers" || [ $? -eq 75 ]
  systemctl start gpu-infra-peers.timer
}
