"""The resources: the Pulumi component and children that turn a checked plan into cloud objects.

:class:`.endpoint.HaEndpoint` (run the pipeline, then build), one :class:`.zone.EndpointZone` per availability zone
with its backend's resources (:mod:`ha_endpoint.backends`) and its publication gate, the security groups
(:mod:`.security`), the DNS records (:mod:`.dns`) and the one-endpoint-per-name claim (:mod:`.stack_names`).
"""
