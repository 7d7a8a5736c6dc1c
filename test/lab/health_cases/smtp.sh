# shellcheck shell=bash
# smtp check cases for health_checkers_lab_test, which sources this file and calls
# health_cases_smtp with the lab up (d1 runs `tandem check run`, the servers run in rs1) and
# node_spawn, wait_until, check_expect and blackhole defined. Real servers: Python's smtpd
# (python3 up to 3.11; its case is left out, with a note, where it is gone) and socat with
# scripted responders for the servers no MTA would be.

# The tools these cases run, for the runner to check before the lab comes up.
HEALTH_CASES_TOOLS+=(socat python3 ss)

# _smtp_listening NODE PORT: something listens on TCP PORT in NODE.
_smtp_listening() { node_exec "$1" ss -Hlnt "sport = :$2" | grep -q .; }

# _smtp_spawn NAME PORT CMD...: starts a server in rs1 and waits until it listens.
_smtp_spawn() {
  local name=$1 port=$2
  shift 2
  node_spawn rs1 "$name" "$@" >/dev/null
  wait_until 10 _smtp_listening rs1 "$port"
}

# _smtp_scripted NAME PORT < SCRIPT: a TCP server on PORT in rs1 running the shell SCRIPT for
# each connection, its stdin and stdout the connection. The script is a file: socat's address
# syntax would take the backslashes of an inline "\r\n" for its own.
_smtp_scripted() {
  node_put rs1 "/etc/health-smtp/$1.sh" || return 1
  _smtp_spawn "$1" "$2" socat TCP4-LISTEN:"$2",fork,reuseaddr SYSTEM:"sh /etc/health-smtp/$1.sh"
}

health_cases_smtp() {
  local rs smtp=(--type smtp --timeout 500ms)
  rs=$(lab_addr rs1)

  if python3 -c 'import smtpd' 2>/dev/null; then
    _smtp_spawn smtp-python 2525 python3 -W ignore -m smtpd -n -c DebuggingServer 0.0.0.0:2525 ||
      return 1
    check_expect "smtp: python smtpd" healthy "220 banner, EHLO 250" -- \
      "${smtp[@]}" --address "$rs:2525" --set helo=d1.lab.test
  else
    # Not "SKIPPED:", which would mark the whole lab test skipped.
    echo "note: smtp against python smtpd left out (this python3 has no smtpd module)"
  fi
  _smtp_scripted smtp-multi 2526 <<'SH' || return 1
printf '220-rs1 ESMTP lab\r\n220 no UCE\r\n'
read -r l
printf '250-rs1 hello\r\n250-PIPELINING\r\n250 8BITMIME\r\n'
read -r l
printf '221 bye\r\n'
SH
  _smtp_scripted smtp-554 2527 <<'SH' || return 1
printf '554 5.3.2 rs1 says no\r\n'
SH
  _smtp_scripted smtp-ehlo 2528 <<'SH' || return 1
printf '220 rs1 ESMTP\r\n'
read -r l
printf '502 5.5.1 no EHLO here\r\n'
read -r l
SH
  _smtp_scripted smtp-garbage 2529 <<'SH' || return 1
printf 'SSH-2.0-OpenSSH_9.2\r\n'
cat >/dev/null  # hold the connection until the checker closes it
SH
  _smtp_scripted smtp-silent 2530 <<'SH' || return 1
cat >/dev/null  # hold the connection until the checker closes it
SH
  _smtp_scripted smtp-long 2531 <<'SH' || return 1
printf '220 '
head -c 20000 /dev/zero | tr -c a a
cat >/dev/null  # hold the connection until the checker closes it
SH
  _smtp_scripted smtp-forever 2532 <<'SH' || return 1
yes 220-more
SH
  _smtp_scripted smtp-close 2533 <<'SH' || return 1
true
SH
  _smtp_scripted smtp-cut 2535 <<'SH' || return 1
printf '220-rs1 ESMTP, then gone'
SH
  _smtp_scripted smtp-hole 2534 <<'SH' || return 1
printf '220 rs1\r\n'
read -r l
printf '250 ok\r\n'
SH
  blackhole rs1 tcp 2534

  check_expect "smtp: multi-line 220 and 250" healthy "220 banner, EHLO 250" -- \
    "${smtp[@]}" --address "$rs:2526"
  check_expect "smtp: a 554 banner" unhealthy 'banner 554: "5.3.2 rs1 says no"' -- \
    "${smtp[@]}" --address "$rs:2527"
  check_expect "smtp: EHLO refused" unhealthy 'EHLO answered 502: "5.5.1 no EHLO here"' -- \
    "${smtp[@]}" --address "$rs:2528"
  check_expect "smtp: not SMTP" unhealthy 'garbage banner "SSH-2.0-OpenSSH_9.2"' -- \
    "${smtp[@]}" --address "$rs:2529"
  check_expect "smtp: never greets" unhealthy "timed out after 500 ms waiting for the banner" -- \
    "${smtp[@]}" --address "$rs:2530"
  check_expect "smtp: a 20000-byte line" unhealthy "reply line longer than 1000 bytes" -- \
    "${smtp[@]}" --address "$rs:2531"
  check_expect "smtp: talks forever" unhealthy "more than 16384 bytes waiting for the banner" -- \
    "${smtp[@]}" --address "$rs:2532"
  check_expect "smtp: closes at once" unhealthy "connection closed before the banner" -- \
    "${smtp[@]}" --address "$rs:2533"
  check_expect "smtp: closes in the middle of the banner" unhealthy \
    'connection closed in the middle of the banner: got "220-rs1 ESMTP, then gone"' -- \
    "${smtp[@]}" --address "$rs:2535"
  check_expect "smtp: a closed port" unhealthy "connection refused" -- \
    "${smtp[@]}" --address "$rs:2599"
  check_expect "smtp: black-holed" unhealthy "timed out after 500 ms" -- \
    "${smtp[@]}" --address "$rs:2534"
}
