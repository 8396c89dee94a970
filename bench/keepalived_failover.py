"""Failover within a zone on the keepalived backend (docs/keepalived.md), on the local cloud's data plane: a client
asks the zone's floating IP every 0.1 s (HTTPS, 1 s timeout, a new connection each time) while the VIP holder's
listener is stopped (localcloud/fault member-down <holder>), and prints when answers came from which member, how
long no member answered and how many requests failed; then the holder's listener comes back (member-up).

    HA_ENDPOINT_STATE=... LOCALCLOUD_PORT_OFFSET=... .venv/bin/python bench/keepalived_failover.py <floating ip> <holder>
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import threading
import time

CONTEXT = ssl.create_default_context()
CONTEXT.check_hostname, CONTEXT.verify_mode = False, ssl.CERT_NONE


def ask(address: str) -> str:
    try:
        with socket.create_connection((address, 6443), timeout=1) as raw, \
                CONTEXT.wrap_socket(raw, server_hostname="api") as tls:
            tls.settimeout(1)
            tls.sendall(b"GET / HTTP/1.0\r\nHost: api\r\n\r\n")
            chunks = []
            while True:
                chunk = tls.recv(4096)
                if not chunk:
                    break
                chunks.append(chunk)
            words = b"".join(chunks).decode(errors="replace").split("\r\n\r\n", 1)[-1].split()
            return words[0] if words else "?"
    except OSError as error:
        return f"failed({type(error).__name__})"


def main(address: str, holder: str, seconds: float = 20.0) -> None:
    log: list[tuple[float, str]] = []
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            started = time.monotonic()
            log.append((started, ask(address)))
            time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))

    thread = threading.Thread(target=client)
    thread.start()
    time.sleep(3)
    t0 = time.monotonic()
    subprocess.run(["localcloud/fault", "member-down", holder], check=True, capture_output=True)
    time.sleep(seconds)
    stop.set()
    thread.join()
    subprocess.run(["localcloud/fault", "member-up", holder], check=True, capture_output=True)
    after = [(t - t0, who) for t, who in log if t >= t0]
    before = {who for t, who in log if t < t0}
    failed = [t for t, who in after if who.startswith("failed") or who == "?"]
    first_other = next((t for t, who in after if not who.startswith("failed") and who not in (holder, "?")), None)
    print(f"before: answered by {sorted(before)}; {holder}'s listener stopped at t=0")
    print(f"requests after t=0: {len(after)}, failed: {len(failed)}"
          + (f" (from t={failed[0]:.2f}s to t={failed[-1]:.2f}s)" if failed else ""))
    print(f"first answer from another member: t={first_other:.2f}s" if first_other is not None
          else "no other member answered")
    print("answers by member after t=0:", {who: sum(1 for _, w in after if w == who) for who in {w for _, w in after}})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
