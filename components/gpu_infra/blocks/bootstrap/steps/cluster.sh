# Training nodes reach each other as root over SSH with the fleet's two ED25519 keys, which the
# stack generates and keeps in encrypted OOS parameters the node role may only read
# (blocks.compute.trust): the user key (root's id_ed25519, the one key of the fleet in
# authorized_keys) and the host key (every node's ssh_host_ed25519_key, which known_hosts pins
# for the fleet's names). Nothing a node, or anyone who may tag its instances, writes changes
# what a node trusts. gpu-infra-peers (at boot, every 2 minutes and at job start) lists the
# stack's node list as the hostfile, the torchrun environment, /etc/hosts and known_hosts.
step_cluster_ssh() {
  local ssh=$ROOT/root/.ssh
  mkdir -p "$ssh"
  chmod 700 "$ssh"
  fleet_key "$SSH_USER_KEY" "$ssh/id_ed25519"
  KEY_CHANGED=0
  fleet_key "$SSH_HOST_KEY" "$ROOT/etc/ssh/ssh_host_ed25519_key"
  # OpenSSH's unit: ssh.service on Ubuntu (socket-activated on 24.04, where it starts with
  # the new key at the next connection), sshd.service on Alibaba Cloud Linux
  if [ "$KEY_CHANGED" = 1 ]; then
    case $(os_id) in
      ubuntu) systemctl try-restart ssh.service ;;
      *) systemctl try-restart sshd.service ;;
    esac
  fi
  # root's authorized_keys: what it held (the login key pair's key) and the fleet's key
  touch "$ssh/authorized_keys"
  grep -v ' gpu-infra-fleet$' "$ssh/authorized_keys" > "$ssh/keys" || [ $? -eq 1 ]
  echo "$(cut -d ' ' -f 1,2 "$ssh/id_ed25519.pub") gpu-infra-fleet" >> "$ssh/keys"
  chmod 600 "$ssh/keys"
  mv "$ssh/keys" "$ssh/authorized_keys"
  printf 'GlobalKnownHostsFile /etc/gpu-infra/known_hosts /etc/ssh/ssh_known_hosts\n' \
    > "$ROOT/etc/ssh/ssh_config.d/gpu-infra.conf"
  systemctl enable gpu-infra-peers.timer
}

# fleet_key PARAMETER FILE: the private key in encrypted parameter PARAMETER as FILE (mode
# 600) and its public half as FILE.pub (ssh-keygen -y fails on anything but a private key);
# KEY_CHANGED=1 when FILE held another key.
fleet_key() {
  (umask 077 && "$API" secret "$1" > "$2.new")
  ssh-keygen -y -f "$2.new" > "$2.pub.new"
  cmp -s "$2.new" "$2" || KEY_CHANGED=1
  mv "$2.pub.new" "$2.pub"
  mv "$2.new" "$2"
}

# step_cluster_peers: after the health check (only a healthy node takes a rank); exit 75 is
# gpu-infra-peers waiting for the rest of the fleet, which the timer retries every 2 minutes
# (restarted: a new release's timer takes effect).
step_cluster_peers() {
  "$BIN_DIR/gpu-infra-peers" || [ $? -eq 75 ]
  systemctl restart gpu-infra-peers.timer
}
