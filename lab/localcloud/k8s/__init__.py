"""A small Kubernetes control plane for tests (issue 28): three etcd members forming one cluster and three
kube-apiservers, each on every member, with a CA and admin credentials made per cluster. No kubelet, no scheduler:
API objects only. Built from Go modules by `lab/engine/build.sh --k8s` (lab/engine/README.md).

Modules: layout (nodes, addresses, ports, files: pure), pki (certificates, with ``cryptography``), cluster (start,
wait, measure, stop by PID file). ``python -m localcloud.k8s up|down|status`` drives one cluster from a shell.

Today every node listens on 127.0.0.1 on ports of its own; the later step ("behind the endpoint") gives each node an
address on the data plane and starts its processes under ``ip netns exec`` (``layout.spread``), unchanged otherwise.
"""
