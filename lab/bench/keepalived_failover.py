"""Failover within a zone on the keepalived backend (docs/keepalived.md), on the local cloud's data plane: a client
asks the zone's floating IP every 0.1 s (HTTPS, 1 s timeout, a new connection each time) while the VIP holder's
listener is stopped (lab/localcloud/fault member-down <holder>), then while it comes back (member-up), and prints, for
each of the two switches, when answers came from which member and how many requests failed (and how).

    HA_ENDPOINT_STATE=... LOCALCLOUD_PORT_OFFSET=... .venv/bin/python lab/bench/keepalived_failover.py \
        <floating ip> <holder> [<seconds down> [<seconds after member-up>]]

The fail-back: once the holder's listener answers again (the track script's ``rise``), a member whose keepalived
preempts takes the VIP back (a second switch); with ``nopreempt`` the VIP stays with the member that took it.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter

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


def failed(who: str) -> bool:
    return who.startswith("failed") or who == "?"


def report(phase: str, after: list[tuple[float, str]], before: str) -> None:
    """One switch: the requests from its t = 0 on (``after``: (t, who answered)), ``before`` the member that answered
    until then."""
    failed = [(t, who) for t, who in after if failed(who)]
    kinds = Counter(who[len("failed("):-1] if who.startswith("failed(") else who for _, who in failed)
    last_before = max((t for t, who in after if who == before), default=None)
    first_other = next((t for t, who in after if not failed(who) and who != before), None)
    print(f"{phase}: requests {len(after)}, failed {len(failed)}"
          + (f" ({', '.join(f'{n} {kind}' for kind, n in kinds.most_common())}; t={failed[0][0]:.2f}s .. "
             f"t={failed[-1][0]:.2f}s)" if failed else ""))
    print(f"{phase}: last answer from {before}: " + ("none" if last_before is None else f"t={last_before:.2f}s")
          + "; first answer from another member: " + ("none" if first_other is None else f"t={first_other:.2f}s"))
    print(f"{phase}: answers by member:", dict(Counter(who for _, who in after if not failed(who))))


def main(address: str, holder: str, seconds: float = 20.0, back_seconds: float = 20.0) -> None:
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
    subprocess.run(["lab/localcloud/fault", "member-down", holder], check=True, capture_output=True)
    time.sleep(seconds)
    t1 = time.monotonic()
    subprocess.run(["lab/localcloud/fault", "member-up", holder], check=True, capture_output=True)
    time.sleep(back_seconds)
    stop.set()
    thread.join()
    before = {who for t, who in log if t < t0}
    print(f"before: answered by {sorted(before)}; {holder}'s listener stopped at t=0 (failover), started again at "
          f"t=0 of the fail-back ({t1 - t0:.1f} s later)")
    down = [(t - t0, who) for t, who in log if t0 <= t < t1]
    report("failover", down, holder)
    answering = [who for _, who in down if not failed(who)]
    report("fail-back", [(t - t1, who) for t, who in log if t >= t1], answering[-1] if answering else holder)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(float(value) for value in sys.argv[3:5]))
