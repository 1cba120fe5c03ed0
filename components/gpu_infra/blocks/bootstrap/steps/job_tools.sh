# The job tools (the elastic launcher gpu-infra-torchrun, gpu-infra-resume and, on spot
# fleets, the spot watcher and its unit) are too large for the user data: the stack keeps
# their installer in one of its buckets, the user data pins its key and sha256, and every
# boot fetches, checks and runs it (it writes the files and enables the watcher). The
# object is named <sha256>.sh: its name is the digest the step checks.
step_job_tools() {
  local installer=$STATE_DIR/job-tools.sh sha=${JOB_TOOLS_OBJECT##*/}
  "$API" oss-get "$JOB_TOOLS_BUCKET" "$JOB_TOOLS_OBJECT" "$installer"
  verify_sha256 "the job tools" "$installer" "${sha%.sh}"
  GPU_INFRA_ROOT=$ROOT bash "$installer"
}
