"""The local cloud's data plane: OVN (NB/SB ovsdb, northd), one chassis per AZ in a network namespace of its own,
member hosts (a Nova server = a network namespace with a small server), the public network reachable from the
machine, and the dev stack's serving control-plane nodes. On by default; ``LOCALCLOUD_DATAPLANE=none`` at a state
directory's first ``up`` leaves it out (see config.mode).

Modules: config (names, addresses, ports), netns (ip/ovs command helpers), ovn (central + chassis: start, stop,
status), members (member namespaces and their reconciler daemon), member_server (what runs in a member), reach
(the `ip route get` guard every client uses), faults (member-down/up, az-down/up), nodes (the dev stack's members).
"""
