"""A client as Python programs are: `requests` with its defaults (no timeout: urllib3 tries each address the name
resolves to in turn, each with the kernel's own connect timeout). Each request opens a new connection and resolves
the name again at the DNS server given (the local cloud's named), without a cache: the resolution is swapped in at
``socket.getaddrinfo``, which urllib3 calls, so the order and the number of addresses are what named answered.

One JSON line per request on stdout, as lab/bench/failover/main.go prints them.

    python requests_client.py URL DNS_HOST:DNS_PORT DURATION_S INTERVAL_S [CONNECT_TIMEOUT_S [READ_TIMEOUT_S]]

With CONNECT_TIMEOUT_S, each request is made with ``timeout=(CONNECT_TIMEOUT_S, READ_TIMEOUT_S)`` (READ_TIMEOUT_S:
30 unless given): urllib3 gives each address that connect timeout, and a connected request that hears nothing for
READ_TIMEOUT_S fails (its zone went dark after it connected).
"""
import ipaddress
import json
import socket
import sys
import time
import urllib.parse

import dns.message
import dns.query
import dns.rdatatype
import requests
import urllib3

urllib3.disable_warnings()  # the members' certificates are self-signed

url, server, duration, interval = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
timeout = (float(sys.argv[5]), float(sys.argv[6]) if len(sys.argv) > 6 else 30.0) if len(sys.argv) > 5 else None
host, port = server.rsplit(":", 1)
name = urllib.parse.urlsplit(url).hostname
system_getaddrinfo = socket.getaddrinfo
try:
    literal = bool(ipaddress.ip_address(name))
except ValueError:
    literal = False


def getaddrinfo(host_, port_, family=0, type_=0, proto=0, flags=0):
    if host_ != name or literal:  # an address (a loop over a floating IP) is its own answer
        return system_getaddrinfo(host_, port_, family, type_, proto, flags)
    answer = dns.query.udp(dns.message.make_query(name, "A"), host, port=int(port), timeout=2)
    addresses = [item.address for rrset in answer.answer if rrset.rdtype == dns.rdatatype.A for item in rrset]
    if not addresses:
        raise socket.gaierror(socket.EAI_NONAME, f"{name}: no A record at {server}")
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port_))) for address in addresses]


socket.getaddrinfo = getaddrinfo
began = time.monotonic()
while time.monotonic() - began < duration:
    start = time.monotonic() - began
    line = {"start": round(start, 3)}
    try:
        with requests.Session() as session:
            response = session.get(url, verify=False, timeout=timeout)
        line["ok"] = response.status_code < 500
        line["answer"] = response.text.strip()[:80]
        if not line["ok"]:
            line["error"] = f"HTTP {response.status_code}"
    except Exception as error:  # noqa: BLE001 (each failure is a figure)
        line.update(ok=False, error=f"{type(error).__name__}: {error}"[:300])
    line["end"] = round(time.monotonic() - began, 3)
    print(json.dumps(line), flush=True)
    time.sleep(interval)
