# gpu-infra drain: what an instance leaving in a scale-in runs (Cloud Assistant, started on
# every leaving instance of the scale-in by the SCALE_IN hook's OOS template, which answers
# the lifecycle action when each instance's drain has returned). POSIX sh: Cloud Assistant
# runs it with sh (dash on Ubuntu). @LIMIT@, @PORTS@ and @QUEUE@ are filled in by the stack.
#
# 1. Stop taking work: $S/draining (render workers take no new job while it exists; the
#    model server's readiness check may fail on it).
# 2. Wait, up to LIMIT seconds, while work is in flight: a job file in $S/jobs (one per job
#    the node has received and not finished) or an established connection to a service
#    port (requests in flight).
# 3. At the limit, hand back what is left: the job files move to $S/handed-back (the worker
#    stops those jobs and does not delete their messages) and, with the stack's job queue
#    QUEUE, gpu_infra_queue.py (node tools) makes each one's message visible again at once
#    (the receipt handle on the job file's first line); a job it cannot return comes back
#    when its visibility ends. Then the drain returns, so the instance is released.
R=${GPU_INFRA_ROOT:-}
S=$R/var/lib/gpu-infra
L=$R/var/log/gpu-infra/drain.log
LIMIT=@LIMIT@
PORTS='@PORTS@'
QUEUE='@QUEUE@'
TOOL=$R/opt/gpu-infra/bin/gpu_infra_queue.py
mkdir -p "$S/jobs" "${L%/*}"
log() {
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) drain: $*" | tee -a "$L"
}
in_flight() {
  n=$(find "$S/jobs" -type f | wc -l)
  for port in $PORTS; do
    n=$((n + $(ss -Htn state established "( sport = :$port )" | wc -l)))
  done
  echo "$n"
}
date +%s > "$S/draining"
log "stop taking work; up to ${LIMIT}s for $(in_flight) job(s) or request(s) in flight"
end=$(($(date +%s) + LIMIT))
while [ "$(in_flight)" -gt 0 ] && [ "$(date +%s)" -lt "$end" ]; do
  sleep 2
done
left=$(in_flight)
if [ "$left" -eq 0 ]; then
  log "work finished; the instance may go"
  exit 0
fi
mkdir -p "$S/handed-back"
find "$S/jobs" -type f -exec mv {} "$S/handed-back/" \;
log "limit of ${LIMIT}s reached: handed back $left job(s) or request(s)"
if [ -n "$QUEUE" ] && [ -f "$TOOL" ] && [ -n "$(ls -A "$S/handed-back")" ]; then
  python3 "$TOOL" return "$QUEUE" "$S/handed-back/"* 2>&1 | tee -a "$L"
fi
log "the instance may go"
