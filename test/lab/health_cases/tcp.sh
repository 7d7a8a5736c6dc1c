# shellcheck shell=bash
# tcp checks against a socat listener in rs1 (health_checkers_lab_test's case API).
health_cases_tcp() {
  local rs rs6 t=500ms
  command -v socat >/dev/null || { echo "SKIPPED: socat is not installed (the tcp listener)"; return 0; }
  rs=$(lab_addr rs1 eth0)
  rs6=$(lab_addr rs1 eth0 6)
  # One listener for both families; every connection is read to its end and dropped.
  node_spawn rs1 tcp_listener socat -u TCP6-LISTEN:9000,ipv6only=0,reuseaddr,fork /dev/null >/dev/null
  wait_listening rs1 tcp 9000 ||
    { case_result FAIL "listener" "socat does not listen on rs1:9000: $(tail -3 "$LAB_DIR/rs1/tcp_listener.log")"; return 0; }
  blackhole rs1 tcp 9002

  check_expect "tcp: healthy" healthy "" -- --type tcp --address "$rs:9000" --timeout $t
  check_expect "tcp: healthy over IPv6" healthy "" -- --type tcp --address "[$rs6]:9000" --timeout $t
  check_expect "tcp: healthy, closed with a reset" healthy "" -- --type tcp --address "$rs:9000" \
    --timeout $t --set tcp_reset=true
  check_expect "tcp: refused (nothing listens)" unhealthy "connection refused" -- --type tcp \
    --address "$rs:9001" --timeout $t
  check_expect "tcp: timeout (black-holed)" unhealthy "timed out after 500 ms" -- --type tcp \
    --address "$rs:9002" --timeout $t
}
