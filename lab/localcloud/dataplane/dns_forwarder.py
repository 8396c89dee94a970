"""A DNS forwarder on port 53 inside a client namespace, relaying every query to the local cloud's named (system
python, root, standard library only).

Why: named listens on 127.0.0.1:<PORTS['named']> (5300) in the root namespace, and Go's pure resolver (kubectl,
client-go, Pulumi's providers), like glibc's, asks a resolv.conf nameserver on port 53 only. A client namespace
(localcloud.dataplane.client_ns) names 127.0.0.1 in its resolv.conf; this process listens there, on UDP and TCP,
and relays each query unchanged to named, and named's answer unchanged back: no cache, no rewriting, so a client
sees exactly named's records and TTLs.

Linux's setns is per thread: the listening sockets are made by a thread that has entered the namespace (a socket
stays in the namespace it was made in, whichever thread uses it), the upstream sockets by threads that never left
the root namespace (every thread but that one: new threads are started from the main thread).

  python3 -m localcloud.dataplane.dns_forwarder --ns lc0-c0 --upstream 127.0.0.1:5300 [--listen 127.0.0.1:53]
"""
import argparse
import ctypes
import os
import signal
import socket
import sys
import threading

CLONE_NEWNET = 0x40000000
UDP_TIMEOUT = 5.0        # seconds to wait for named's answer to one UDP query (the client retries after its own)
TCP_TIMEOUT = 30.0       # an idle TCP connection (either side) is closed after this
MAX_UDP = 65535


def setns(ns: str) -> None:
    """Move the calling thread into network namespace ``ns`` (/run/netns/<ns>)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f'/run/netns/{ns}', os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f'setns({ns}): {os.strerror(err)}')
    finally:
        os.close(fd)


def listeners(address: tuple[str, int], ns: str | None) -> tuple[socket.socket, socket.socket]:
    """A UDP and a listening TCP socket bound to ``address`` inside namespace ``ns`` (None: this one), made by a
    thread of their own that enters the namespace and ends there (the calling thread never moves)."""
    made: dict = {}

    def make() -> None:
        try:
            if ns:
                setns(ns)
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(address)
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind(address)
            tcp.listen(128)
            made['sockets'] = (udp, tcp)
        except Exception as exc:  # noqa: BLE001 (re-raised in the caller)
            made['error'] = exc
    thread = threading.Thread(target=make, name=f'setns-{ns}')
    thread.start()
    thread.join()
    if 'error' in made:
        raise made['error']
    return made['sockets']


def ask_udp(query: bytes, upstream: tuple[str, int], timeout: float = UDP_TIMEOUT) -> bytes | None:
    """named's answer to one UDP query (None when none came in time), from a socket of the calling thread's
    namespace. The answer must carry the query's id (a stray datagram is skipped)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.connect(upstream)
        sock.send(query)
        try:
            while True:
                answer = sock.recv(MAX_UDP)
                if answer[:2] == query[:2]:
                    return answer
        except OSError:
            return None


def serve_udp(listener: socket.socket, upstream: tuple[str, int], stop: threading.Event) -> None:
    """Each datagram on ``listener`` relayed to ``upstream`` by a thread of its own; the answer sent back."""
    listener.settimeout(0.5)
    while not stop.is_set():
        try:
            query, client = listener.recvfrom(MAX_UDP)
        except socket.timeout:
            continue
        except OSError:
            return

        def relay(query=query, client=client) -> None:
            answer = ask_udp(query, upstream)
            if answer is not None:
                try:
                    listener.sendto(answer, client)
                except OSError:
                    pass
        threading.Thread(target=relay, daemon=True).start()


def pipe(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until either side ends (then shut ``dst`` for writing)."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def relay_tcp(client: socket.socket, upstream: tuple[str, int]) -> None:
    """One client connection relayed byte for byte to a connection of its own to ``upstream`` (DNS over TCP frames
    each message with its length: nothing to parse)."""
    with client:
        client.settimeout(TCP_TIMEOUT)
        try:
            server = socket.create_connection(upstream, timeout=TCP_TIMEOUT)
        except OSError:
            return
        with server:
            back = threading.Thread(target=pipe, args=(server, client), daemon=True)
            back.start()
            pipe(client, server)
            back.join(TCP_TIMEOUT)


def serve_tcp(listener: socket.socket, upstream: tuple[str, int], stop: threading.Event) -> None:
    """Each connection on ``listener`` relayed by a thread of its own."""
    listener.settimeout(0.5)
    while not stop.is_set():
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        except OSError:
            return
        threading.Thread(target=relay_tcp, args=(client, upstream), daemon=True).start()


def address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(':')
    return host, int(port)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog='localcloud.dataplane.dns_forwarder')
    ap.add_argument('--ns', required=True, help='the network namespace to listen in')
    ap.add_argument('--upstream', required=True, type=address, help="named's host:port in the root namespace")
    ap.add_argument('--listen', default='127.0.0.1:53', type=address)
    args = ap.parse_args(argv)
    udp, tcp = listeners(args.listen, args.ns)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threads = [threading.Thread(target=serve_udp, args=(udp, args.upstream, stop), daemon=True),
               threading.Thread(target=serve_tcp, args=(tcp, args.upstream, stop), daemon=True)]
    for thread in threads:
        thread.start()
    print(f'listening on {args.listen[0]}:{args.listen[1]} (udp, tcp) in {args.ns}, relaying to '
          f'{args.upstream[0]}:{args.upstream[1]}', flush=True)
    while not stop.wait(1):
        pass
    for sock in (udp, tcp):
        sock.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
