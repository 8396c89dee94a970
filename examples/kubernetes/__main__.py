"""A downstream stack: reads the endpoint stack through a StackReference and deploys into the cluster behind it.

The kubeconfig's server is the endpoint's DNS name and API port; it (and so the Provider and everything deployed with
it) waits until the endpoint stack publishes addresses. Credentials are this stack's secrets:
    pulumi config set endpointStack <org>/ha-endpoint/prod
    pulumi config set --secret caCertificate -- "$(cat ca.crt)"
    pulumi config set --secret clientCertificate -- "$(cat admin.crt)"
    pulumi config set --secret clientKey -- "$(cat admin.key)"

For a cluster that runs no workloads (no kubelet, scheduler or controller manager: the local cloud's test cluster),
`pulumi config set awaitRollout false` skips Pulumi's waits (every object annotated `pulumi.com/skipAwait`, deleted
with background propagation): there a Deployment never becomes available, a deleted Namespace is never finalized and
a foreground deletion never completes.

Optionally, the endpoint's DNS watcher as a Deployment (and the Secret it reads) in the cluster of the default
Kubernetes provider (kubernetes:kubeconfig: better one that does not depend on this endpoint), with an image you built
(Python and `pip install ha-endpoint`):
    pulumi config set watcherImage registry.example/ha-endpoint:0.1.0
    pulumi config set --secret cloudsYaml -- "$(cat clouds.yaml)"
    pulumi config set cloud openstack
"""

import pulumi
import pulumi_kubernetes as k8s

from ha_endpoint.kubernetes import ClusterAccess, Credentials, EndpointRef, WatcherDeployment, WatchOptions

config = pulumi.Config()
if config.get_bool("awaitRollout") is False:
    def skip_await(args: pulumi.ResourceTransformationArgs):
        """Annotate every Kubernetes object ``pulumi.com/skipAwait`` and delete it with background propagation (a
        foreground deletion waits for the garbage collector, part of the controller manager)."""
        if not args.type_.startswith("kubernetes:"):
            return None
        metadata = dict(args.props.get("metadata") or {})
        metadata["annotations"] = {**(metadata.get("annotations") or {}), "pulumi.com/skipAwait": "true",
                                   "pulumi.com/deletionPropagationPolicy": "background"}
        return pulumi.ResourceTransformationResult(props={**args.props, "metadata": metadata}, opts=args.opts)
    pulumi.runtime.register_stack_transformation(skip_await)

endpoint = EndpointRef.from_stack_reference(pulumi.StackReference(config.require("endpointStack")))
access = ClusterAccess("workload", endpoint, Credentials(
    ca_certificate=config.require_secret("caCertificate"),
    client_certificate=config.require_secret("clientCertificate"),
    client_key=config.require_secret("clientKey"),
))
apps = k8s.core.v1.Namespace("apps", metadata={"name": "apps"},
                             opts=pulumi.ResourceOptions(provider=access.provider()))
# What the workloads read of the endpoint: its name and the addresses published now.
endpoint_info = k8s.core.v1.ConfigMap(
    "endpoint", metadata={"name": "endpoint", "namespace": apps.metadata["name"]},
    data={"server": access.server,
          "addresses": pulumi.Output.from_input(endpoint.published).apply(lambda found: ",".join(found or []))},
    opts=pulumi.ResourceOptions(provider=access.provider()))

if config.get("watcherImage"):
    watcher = WatcherDeployment("dns-watcher", endpoint, clouds_yaml=config.require_secret("cloudsYaml"),
                                cloud=config.require("cloud"), image=config.require("watcherImage"),
                                stack=config.require("endpointStack"), options=WatchOptions(interval=2))
    pulumi.export("watcher", watcher.deployment.metadata["name"])

pulumi.export("server", access.server)
pulumi.export("kubeconfig", access.kubeconfig)  # a secret
pulumi.export("namespace", apps.metadata["name"])
pulumi.export("configMap", endpoint_info.metadata["name"])
