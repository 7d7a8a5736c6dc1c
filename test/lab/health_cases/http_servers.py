#!/usr/bin/env python3
"""The real servers of health_cases/http.sh, all in one process (one spawn under load):

  --http PORT    plain HTTP (http.server) serving --dir
  --https PORT   the same over TLS (the ssl module), with --cert and --key
  --junk PORT    answers every connection with bytes that are not HTTP, then closes
  --stream PORT  answers "200 OK" without a Content-Length and sends body bytes until the
                 client hangs up (a real server that streams)

Prints "ready" once every port listens. Runs until SIGTERM.
"""
import argparse
import functools
import http.server
import socketserver
import ssl
import threading
import time

STREAM_LIMIT_S = 30  # a forgotten client is not fed forever


class Junk(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"SSH-2.0-not-http\r\n\x00\x01\x02\xff garbage\r\n")


class Stream(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.recv(4096)
        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Connection: close\r\n\r\n")
        chunk = b"x" * 4096
        end = time.monotonic() + STREAM_LIMIT_S
        try:
            while time.monotonic() < end:
                self.request.sendall(chunk)
        except OSError:
            pass  # the client stopped reading and closed: what the case expects


class TcpServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bind", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--http", type=int, required=True)
    p.add_argument("--https", type=int, required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--junk", type=int, required=True)
    p.add_argument("--stream", type=int, required=True)
    a = p.parse_args()

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=a.dir)
    plain = http.server.ThreadingHTTPServer((a.bind, a.http), handler)
    tls = http.server.ThreadingHTTPServer((a.bind, a.https), handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    servers = [plain, tls, TcpServer((a.bind, a.junk), Junk), TcpServer((a.bind, a.stream), Stream)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
