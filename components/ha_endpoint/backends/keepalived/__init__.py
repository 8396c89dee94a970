"""The keepalived backend: each availability zone served by a VIP that the zone's members hold with VRRP, for clouds
without a load-balancer service (Octavia).

What it refuses of a configuration (:mod:`.rules`: pure, before the cloud is asked) and at preview (:mod:`.checks`:
what the cloud tells), how it serves a zone (:mod:`.serving`: the VIP port, the VRRP group, the
VIP in each member port's allowed address pairs (:mod:`.pairs`), the floating IP and the zone's readiness
(:mod:`.readiness`)), and what runs on the members (:mod:`.config`: keepalived's configuration, as a file, a
cloud-init fragment and a static pod, in the zone's ``keepalived`` output), how the DNS watcher watches its zones
(:mod:`.watched`), and its two dynamic resources as the package's provider host serves them (``hosted_types``).
docs/keepalived.md. The backend as the registry holds it: :mod:`.backend`.
"""
