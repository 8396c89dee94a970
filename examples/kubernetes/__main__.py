"""A downstream stack: reads the endpoint stack through a StackReference and deploys into the cluster behind it.

The kubeconfig's server is the endpoint's DNS name and API port; it (and so the Provider and everything deployed with
it) waits until the endpoint stack publishes addresses. Credentials are this stack's secrets:
    pulumi config set endpointStack <org>/ha-endpoint/prod
    pulumi config set --secret caCertificate -- "$(cat ca.crt)"
    pulumi config set --secret clientCertificate -- "$(cat admin.crt)"
    pulumi config set --secret clientKey -- "$(cat admin.key)"
"""

import pulumi
import pulumi_kubernetes as k8s

from ha_endpoint.kubernetes import ClusterAccess, Credentials, EndpointRef

config = pulumi.Config()
endpoint = EndpointRef.from_stack_reference(pulumi.StackReference(config.require("endpointStack")))
access = ClusterAccess("workload", endpoint, Credentials(
    ca_certificate=config.require_secret("caCertificate"),
    client_certificate=config.require_secret("clientCertificate"),
    client_key=config.require_secret("clientKey"),
))
apps = k8s.core.v1.Namespace("apps", metadata={"name": "apps"},
                             opts=pulumi.ResourceOptions(provider=access.provider()))

pulumi.export("server", access.server)
pulumi.export("kubeconfig", access.kubeconfig)  # a secret
pulumi.export("namespace", apps.metadata["name"])
