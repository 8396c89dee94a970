"""The Octavia backend: each availability zone served by an Octavia load balancer (amphora or ovn provider).

What it asks the cloud at preview (:mod:`.checks`: its availability zones, the listeners' certificates), how it serves a
zone (:mod:`.serving`: the load balancer, listeners, pools, monitors, members, floating IP and the member waits) and
how the DNS watcher watches its zones (:mod:`.watched`); its own plan of a zone (:mod:`.zone`: the load balancer's
name, provider and availability zone, an adopted tree). Its member client: the one its gates and drains poll and
write through, and the watcher polls through (:mod:`.status`), and the member agent's (:mod:`.agent_client`), with
the calls the two agents' scoped credentials allow (:mod:`.access`). Its settings are the endpoint's top-level keys
(``loadBalancerProvider``, listener timeouts), where deployed stacks have them. The pack holds zones declared
``backend: octavia`` to its Octavia rules (zone placement, pools, OVN limits). Its rules of a configuration
(:mod:`.rules`: pure, which the pack imports too) and the backend as the registry holds it (:mod:`.backend`).

This package module itself imports nothing: the pack imports :mod:`.rules` without the backend's other modules.
"""
