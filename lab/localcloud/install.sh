#!/usr/bin/env bash
# Install the Debian packages of the local cloud, if any is missing.
# No daemon is started by the package scripts (policy-rc.d exits 101); debconf is
# preseeded so no package tries to configure a database or register an endpoint.
set -euo pipefail

PKGS=(keystone neutron-server
      octavia-api octavia-worker octavia-health-manager octavia-housekeeping
      designate-api designate-central designate-worker designate-producer designate-mdns
      rabbitmq-server mariadb-server python3-pymysql python3-bcrypt python3-amqp uwsgi-plugin-python3 openssl
      glance-api placement-api nova-api nova-conductor nova-scheduler
      ovn-central ovn-host openvswitch-switch ethtool iproute2 python3-pip
      bind9 bind9-utils bind9-dnsutils keepalived curl
      swift swift-proxy swift-account swift-container swift-object)
# The data plane (lab/localcloud/dataplane, on unless LOCALCLOUD_DATAPLANE=none): Debian 12's OVS 3.1 tools with
# ovs-vswitchd 3.5 (lab/localcloud/ovs-build.sh), the userspace datapath (no kernel module), OVN 23.03; ethtool turns
# TX checksum offload off on every veth end.
# The keepalived backend's nodes: Debian's keepalived in the member namespaces, curl for its track script
# (lab/localcloud/dataplane/keepalived_nodes.py, STACK=keepalived).
# DNS: named (bind9) is Designate's backend, rndc (bind9-utils) its control, dig (bind9-dnsutils) for users
# (lab/localcloud/dns).
# Object storage: Swift's proxy with the S3 API (s3api + s3token middlewares ship in `swift`) and one account,
# container and object server each (lab/localcloud/swift): the shared Pulumi state of STATE=swift (docs/team-state.md).
# Compute: no nova-compute package (it depends on a hypervisor: libvirt + qemu, or lxc, or ironic); the
# nova-compute processes run python3-nova's own nova.cmd.compute with the fake virt driver (lab/localcloud/services.py).

# Octavia's OVN provider: Debian 12 ships 3.0.0, which has bug 1997418 (health checks are not applied to the floating
# IP's VIP entry: traffic to the FIP still reaches dead members); 3.1.2 (stable/zed, PyPI) has the fix. Installed
# beside the system (pip --target, no dependencies: Debian's own neutron, ovsdbapp and octavia-lib serve it) and put on
# the PYTHONPATH of octavia-api and octavia-driver-agent only. Keep the version in lab/localcloud/dataplane/config.py.
OVN_PROVIDER_VERSION=3.1.2
ovn_provider() {
  local dir="${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}/ovn-octavia-provider-$OVN_PROVIDER_VERSION"
  [[ -f "$dir/.installed" ]] && return 0
  echo "localcloud: installing ovn-octavia-provider $OVN_PROVIDER_VERSION into $dir"
  rm -rf "$dir"
  /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-compile --target "$dir" \
    "ovn-octavia-provider==$OVN_PROVIDER_VERSION"
  touch "$dir/.installed"
}

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$st" == installed ]] || missing+=("$p")
done
if (( ${#missing[@]} == 0 )); then
  echo "localcloud: packages already installed"
  ovn_provider
  "$(dirname "$0")/ovs-build.sh" >/dev/null
  exit 0
fi
echo "localcloud: installing ${#missing[@]} missing package(s): ${missing[*]}"
# The data plane's ovs-vswitchd (lab/localcloud/ovs-build.sh) compiles while apt downloads and installs.
"$(dirname "$0")/ovs-build.sh" >/dev/null &
ovs_build=$!

if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive

# Package scripts must start nothing: a policy-rc.d that exits 101, for the time of this install only
# (an existing one that already refuses everything is left alone; any other is put back afterwards).
if ! { [[ -x /usr/sbin/policy-rc.d ]] && grep -qx 'exit 101' /usr/sbin/policy-rc.d; }; then
  backup=""
  if [[ -e /usr/sbin/policy-rc.d ]]; then
    backup=$(mktemp)
    $SUDO cp -p /usr/sbin/policy-rc.d "$backup"
  fi
  restore() {
    if [[ -n "$backup" ]]; then $SUDO cp -p "$backup" /usr/sbin/policy-rc.d; rm -f "$backup"
    else $SUDO rm -f /usr/sbin/policy-rc.d; fi
  }
  trap restore EXIT
  printf '#!/bin/sh\n# lab/localcloud/install.sh: package scripts start no daemon\nexit 101\n' \
    | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod 755 /usr/sbin/policy-rc.d
fi

pre=""
for p in keystone neutron-common octavia-common designate-common; do
  pre+="$p $p/configure_db boolean false"$'\n'
  pre+="$p $p/dbconfig-install boolean false"$'\n'
  pre+="$p $p/register-endpoint boolean false"$'\n'
done
# The compute packages' own templates (openstack-pkg-tools names them nova/..., novaapi/..., glance/..., placement/...).
for q in nova/configure_db novaapi/configure_db nova/configure_api-endpoint nova/configure_ksat nova/configure_rabbit \
    nova/configure_neutron nova/configure_placement glance/configure_db glance/configure_api-endpoint \
    glance/configure_ksat glance/configure_rabbit placement/configure_db placement/configure_api-endpoint \
    placement/configure_ksat; do
  pre+="${q%%/*} $q boolean false"$'\n'
done
for p in nova-common nova-api glance-common placement-common; do
  pre+="$p $p/dbconfig-install boolean false"$'\n'
done
printf '%s' "$pre" | $SUDO debconf-set-selections

# Keep the downloaded .debs (this image's docker-clean hook empties /var/cache/apt/archives) so that a
# re-install after a purge, or a CI job with this directory cached, downloads nothing.
cache="${HA_ENDPOINT_CACHE:-$HOME/.cache/ha-endpoint}"
debs="$cache/apt-archives"
mkdir -p "$debs/partial"
start=$(date +%s.%N)
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends -o Dir::Cache::Archives="$debs/" -o APT::Sandbox::User=root \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
end=$(date +%s.%N)
secs=$(awk "BEGIN{printf \"%.1f\", $end - $start}")
printf '{"seconds": %s, "packages": %d, "date": "%s"}\n' "$secs" \
  "${#missing[@]}" "$(date -u +%FT%TZ)" > "$cache/localcloud-install.json"
echo "localcloud: packages installed in ${secs} s"

# On a machine with systemd the packages enabled their own units: those would start the Debian-configured
# daemons at boot and take the ports; localcloud starts its own, so disable them (nothing to do without systemd).
if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then
  for unit in mariadb rabbitmq-server epmd.socket keystone neutron-api neutron-rpc-server neutron-server \
      octavia-api octavia-worker octavia-health-manager octavia-housekeeping designate-api designate-central \
      designate-worker designate-producer designate-mdns glance-api placement-api nova-api nova-conductor \
      nova-scheduler openvswitch-switch keepalived ovn-central ovn-host ovn-northd ovn-controller named \
      swift-proxy swift-account swift-container swift-object swift-account-auditor swift-account-reaper \
      swift-account-replicator swift-container-auditor swift-container-reconciler swift-container-replicator \
      swift-container-sharder swift-container-sync swift-container-updater swift-object-auditor \
      swift-object-reconstructor swift-object-replicator swift-object-updater; do
    $SUDO systemctl disable --now "$unit" >/dev/null 2>&1 || true
  done
fi

ovn_provider
wait "$ovs_build"
