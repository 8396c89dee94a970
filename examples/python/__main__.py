"""A stack of your own using the HA endpoint from its Python package (its own components/ folder stays its own).

    venv/bin/pip install <path or git URL of ha-endpoint> -r requirements.txt && pulumi up
"""

import pulumi

from ha_endpoint import DnsArgs, EndpointArgs, HaEndpoint, ListenerArgs, MemberArgs, MonitorArgs, ZoneArgs
from ha_endpoint.args import MonitorType

azs = ["az1", "az2", "az3"]
endpoint = HaEndpoint("k8s-api", EndpointArgs(
    name="k8s-api",
    floating_network="public",  # names or ids; Outputs of resources declared beside work too (examples/same-stack)
    zones={az: ZoneArgs(subnet=f"cp-{az}") for az in azs},
    listeners=[ListenerArgs(port=6443, monitor=MonitorArgs(type=MonitorType.HTTPS, path="/readyz"))],
    members=[MemberArgs(name=f"cp-{n}", az=az, address=f"10.10.{n}.10") for n, az in enumerate(azs, start=1)],
    dns=DnsArgs(dns_zone="example.test.", record="api"),
))

pulumi.export("apiEndpoint", endpoint.fqdn)
pulumi.export("addresses", endpoint.addresses)
