#!/usr/bin/env bash
# Build (or reuse) the data plane's ovs-vswitchd: Open vSwitch 3.5.0, from Debian's own source package
# (openvswitch-source, trixie), into ${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/openvswitch-<version>/
# (bin/ovs-vswitchd, share/vswitch.ovsschema). Prints that directory.
#
# Why not Debian 12's ovs-vswitchd 3.1.0: its userspace conntrack aborts (`assertion conn->conn_type ==
# CT_CONN_TYPE_DEFAULT failed in conn_update_state()`) under long-lived connections through OVN load balancers'
# NAT (the Kubernetes nodes' etcd and API traffic: every ~33 s, README "A real Kubernetes control plane"). Open vSwitch
# 3.2 removed that connection type (the un-NAT entry of a NAT'd connection) from the userspace conntrack. No newer
# ovs-vswitchd is packaged for Debian 12, and the trixie binary needs glibc 2.38, so the source package is built here:
# ovs-vswitchd alone (userspace datapath; no SSL, no libcap-ng, no DPDK, no AF_XDP), ~40 s on 2 cores, with gcc,
# make and python3 (already on this machine kind). Every other OVS/OVN tool stays Debian 12's: ovsdb-server serves the
# 3.5 schema (ovsdb-tool converts a chassis database made with 3.1's), ovn-controller 23.03 drives 3.5's OpenFlow.
# Keep OVS_VERSION in lab/localcloud/dataplane/config.py.
set -euo pipefail

OVS_VERSION=3.5.0
DEB=openvswitch-source_3.5.0-1_all.deb
DEB_URL=http://deb.debian.org/debian/pool/main/o/openvswitch/$DEB
DEB_SHA256=aca60ac8c4ad49a6908c9d8201b97bd75898c54357f880ad50540b0461461bb9   # trixie's Packages index

out="${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/openvswitch-$OVS_VERSION"
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock 9                                    # two clouds starting at once build it once
if [[ -f "$out/.installed" ]]; then
  echo "$out"
  exit 0
fi
started=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "localcloud: building ovs-vswitchd $OVS_VERSION from Debian's $DEB into $out" >&2
curl -fsS --retry 3 -o "$work/$DEB" "$DEB_URL"
echo "$DEB_SHA256  $work/$DEB" | sha256sum -c --quiet -
dpkg-deb -x "$work/$DEB" "$work/x"
src="$work/x/usr/src/openvswitch"
# Only ovs-vswitchd: the generated sources (BUILT_SOURCES: the IDL, the netlink header...) first, then its link.
printf 'include Makefile\nvswitchd-only: $(BUILT_SOURCES)\n\t$(MAKE) -f Makefile vswitchd/ovs-vswitchd\n' >"$work/only.mk"
(
  cd "$src"
  ./configure --quiet --disable-ssl --disable-libcapng --without-dpdk --disable-afxdp CFLAGS="-O2 -g0" >"$work/configure.log" 2>&1 ||
    { tail -30 "$work/configure.log" >&2; exit 1; }
  make -s -j"$(nproc)" -f "$work/only.mk" vswitchd-only >"$work/make.log" 2>&1 || { tail -30 "$work/make.log" >&2; exit 1; }
)
rm -rf "$out.tmp"
mkdir -p "$out.tmp/bin" "$out.tmp/share"
install -m 0755 "$src/vswitchd/ovs-vswitchd" "$out.tmp/bin/ovs-vswitchd"
install -m 0644 "$src/vswitchd/vswitch.ovsschema" "$out.tmp/share/vswitch.ovsschema"
took="built in $(( $(date +%s) - started )) s"
{ "$out.tmp/bin/ovs-vswitchd" --version | head -1; echo "$took"; } >"$out.tmp/VERSION"
touch "$out.tmp/.installed"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "localcloud: ovs-vswitchd $OVS_VERSION $took" >&2
echo "$out"
