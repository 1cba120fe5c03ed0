# NCCL settings for eRDMA in /etc/profile.d (login shells) and /etc/gpu-infra/nccl.env (for
# systemd units and launchers): PAI's single-NIC presets; with several eRDMA NICs every
# device is listed and the GID is picked by address range (the vSwitch CIDR).
step_nccl_env() {
  local devices=() hca cidr env_file=$ETC_DIR/nccl.env
  mapfile -t devices < <(erdma_devices | xargs -r -n 1 basename)
  [ "${#devices[@]}" -gt 0 ] || fail "no eRDMA device for NCCL"
  printf '%s\n' "${NCCL_ENV[@]}" > "$env_file"
  if [ "${#devices[@]}" -gt 1 ]; then
    hca=$(IFS=,; echo "${devices[*]}")
    cidr=$(meta vswitch-cidr-block)
    printf '%s\n' "${NCCL_MULTI_NIC_ENV[@]}" "NCCL_IB_HCA=$hca" \
      "NCCL_IB_ADDR_RANGE=$cidr" >> "$env_file"
  fi
  sed 's/^/export /' "$env_file" > "$ROOT/etc/profile.d/gpu-infra-nccl.sh"
  log "NCCL over ${#devices[@]} eRDMA device(s)"
}
