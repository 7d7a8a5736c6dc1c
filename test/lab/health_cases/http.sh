# shellcheck shell=bash
# http and https checks against real servers in rs1 (health_checkers_lab_test's case API).
# One python process serves every port (http_servers.py beside this file): plain HTTP, HTTPS
# with a certificate for rs1.lab.test signed by a CA made here with openssl, a port answering
# junk and a port streaming an endless body.
health_cases_http() {
  local py=$CASE_PYTHON rs www=$CASE_DIR/www ca=$CASE_DIR/ca.pem name=rs1.lab.test t=500ms
  command -v openssl >/dev/null || { echo "SKIPPED: openssl is not installed (the https certificates)"; return 0; }
  rs=$(lab_addr rs1 eth0)
  mkdir -p "$www"
  echo "tandem-lab-ok" >"$www/index.html"
  head -c 2048 /dev/zero | tr '\0' x >"$www/big.txt"  # 2 KiB, with a Content-Length
  # A CA and a server certificate for $name (no IP in it), valid two days.
  if ! (cd "$CASE_DIR" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
      -out ca.pem -subj /CN=tandem-lab-ca -days 2 -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout rs.key \
      -out rs.csr -subj "/CN=$name" -addext "subjectAltName=DNS:$name" &&
    openssl x509 -req -in rs.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out rs.pem -days 2 \
      -copy_extensions copy) >"$CASE_DIR/openssl.log" 2>&1; then
    case_result FAIL "certificates" "openssl failed: $(tail -3 "$CASE_DIR/openssl.log")"
    return 0
  fi
  node_spawn rs1 http_servers "$py" "$(dirname "${BASH_SOURCE[0]}")/http_servers.py" \
    --bind "$rs" --dir "$www" --http 8080 --https 8443 --cert "$CASE_DIR/rs.pem" \
    --key "$CASE_DIR/rs.key" --junk 8083 --stream 8084 >/dev/null
  local p
  for p in 8080 8443 8083 8084; do
    wait_listening rs1 tcp $p ||
      { case_result FAIL "servers" "nothing listens on rs1:$p: $(tail -5 "$LAB_DIR/rs1/http_servers.log")"; return 0; }
  done
  blackhole rs1 tcp 8082

  check_expect "http: healthy" healthy "HTTP 200" -- --type http --address "$rs:8080" --timeout $t
  check_expect "http: expected body found" healthy "HTTP 200" -- --type http --address "$rs:8080" \
    --timeout $t --set expect_body=tandem-lab-ok
  check_expect "http: refused (nothing listens)" unhealthy "connection refused" -- --type http \
    --address "$rs:8081" --timeout $t
  check_expect "http: timeout (black-holed)" unhealthy "timed out after 500 ms" -- --type http \
    --address "$rs:8082" --timeout $t
  check_expect "http: wrong status (404)" unhealthy "HTTP 404 not in 200-399" -- --type http \
    --address "$rs:8080" --timeout $t --set path=/no-such-page
  check_expect "http: wrong body" unhealthy 'body does not contain "no-such-text"' -- --type http \
    --address "$rs:8080" --timeout $t --set expect_body=no-such-text
  check_expect "http: garbage reply (not HTTP)" unhealthy "not HTTP" -- --type http \
    --address "$rs:8083" --timeout $t
  check_expect "http: oversized body (Content-Length)" unhealthy "response larger than 1024 bytes" \
    -- --type http --address "$rs:8080" --timeout $t --set path=/big.txt --set max_response=1024
  check_expect "http: oversized body (endless stream)" unhealthy "response larger than 1024 bytes" \
    -- --type http --address "$rs:8084" --timeout $t --set max_response=1024
  check_expect "https: healthy, not verified" healthy "HTTP 200" -- --type https \
    --address "$rs:8443" --timeout $t
  check_expect "https: verified, CA unknown" unhealthy "certificate" -- --type https \
    --address "$rs:8443" --timeout $t --set tls_verify=true
  check_expect "https: verified, name is not the address" unhealthy "certificate" -- --type https \
    --address "$rs:8443" --timeout $t --set tls_verify=true --set "ca_file=$ca"
  check_expect "https: verified with ca_file and host" healthy "HTTP 200" -- --type https \
    --address "$rs:8443" --timeout $t --set tls_verify=true --set "ca_file=$ca" --set "host=$name"
  check_expect "https: plain HTTP to the TLS port" unhealthy "" -- --type http \
    --address "$rs:8443" --timeout $t
}
