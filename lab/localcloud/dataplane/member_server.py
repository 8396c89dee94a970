"""What runs in a member (a Nova server's network namespace): answers with the server's name and AZ.

  TCP 80    HTTP: `/` -> "<name> <az>\\n", `/readyz` -> "ok\\n" (what a health monitor asks), anything else 404
  TCP 6443  the same over TLS with a self-signed certificate (as a Kubernetes API server would serve)
  TCP 7     a plain TCP answer: "<name> <az>\\n", then close
  UDP 7     echo: "<name> <az> " + what was sent

No name lookups anywhere (http.server's HTTPServer resolves its own name at bind: a 10 s stall in a namespace with
a default route and no DNS), standard library only, one thread per connection.
Usage: python3 -m localcloud.dataplane.member_server --name web-1 --az az1 --cert <pem> --key <pem>
"""
import argparse
import signal
import socket
import socketserver
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler

HTTP, HTTPS, TCP, UDP = 80, 6443, 7, 7
HANDSHAKE_TIMEOUT = 10   # seconds


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    # An API server's backlog, not socketserver's 5: OVN's TCP health checks leave half-open connections (SYN-RECV)
    # behind for a minute each, one per probe, and with a backlog of 5 they filled the queue until the probes failed
    # and OVN took a serving member out (an ONLINE member went OFFLINE/ERROR minutes after `up`; restarting the server
    # emptied the queue). Go's net/http listens with the system's somaxconn.
    request_queue_size = 4096


class TLSServer(Server):
    """TLS with the handshake in the connection's own thread (a slow client never holds the accept loop)."""

    def __init__(self, address, handler, context: ssl.SSLContext):
        super().__init__(address, handler)
        self.context = context

    def finish_request(self, request, client_address):
        request.settimeout(HANDSHAKE_TIMEOUT)   # a client that connects and never says hello frees its thread
        try:
            request = self.context.wrap_socket(request, server_side=True)
            request.settimeout(None)
        except (ssl.SSLError, OSError):
            return
        with request:
            super().finish_request(request, client_address)


class UDPServer(socketserver.ThreadingUDPServer):
    allow_reuse_address = True
    daemon_threads = True


def handlers(identity: bytes):
    class Http(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        server_version = 'localcloud-member'

        def do_GET(self):  # noqa: N802 (http.server's naming)
            path = self.path.split('?', 1)[0]
            status, body = (200, identity) if path == '/' else (200, b'ok\n') if path == '/readyz' else \
                (404, b'not found\n')
            self.send_response(status)
            self.send_header('Content-Type', 'text/plain')
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *args):
            pass

    class Tcp(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.sendall(identity)

    class Udp(socketserver.BaseRequestHandler):
        def handle(self):
            data, sock = self.request
            sock.sendto(identity.rstrip(b'\n') + b' ' + data, self.client_address)
    return Http, Tcp, Udp


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='member_server')
    ap.add_argument('--name', required=True)
    ap.add_argument('--az', required=True)
    ap.add_argument('--cert', required=True)
    ap.add_argument('--key', required=True)
    args = ap.parse_args(argv)
    identity = f'{args.name} {args.az}\n'.encode()
    Http, Tcp, Udp = handlers(identity)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    https = TLSServer(('0.0.0.0', HTTPS), Http, tls)
    servers = [Server(('0.0.0.0', HTTP), Http), https, Server(('0.0.0.0', TCP), Tcp), UDPServer(('0.0.0.0', UDP), Udp)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(f'serving {identity.decode().strip()} on tcp {HTTP} (http), {HTTPS} (https), {TCP}; udp {UDP}', flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    return 0


if __name__ == '__main__':
    sys.exit(main())
