"""The component's core: pure, no resource, no cloud call and no Pulumi import.

The arguments (:mod:`.args`) and what an input is (:mod:`.inputs`: a value, or an Output of a resource declared
beside, bound to Pulumi's classes by :mod:`ha_endpoint.pulumi_types`), their validation and its messages
(:mod:`.validation`, :mod:`.messages`), the predicates the component and the policy pack share (:mod:`.predicates`),
the naming and facts contract with the pack (:mod:`.contract`, :mod:`.facts`), the stack's identity
(:mod:`.identity`), the cloud facts as typed values (:mod:`.cloud_facts`), the checks that need them
(:mod:`.checks`), the plan (:mod:`.plan`), the facts the endpoint declares (:mod:`.declared`) and the package's
errors (:mod:`.errors`). Nothing here imports another layer.
"""
