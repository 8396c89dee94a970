"""Compatibility for stacks deployed before the gates' folder was named ``gates`` (it was ``readiness``).

Pulumi stores a dynamic resource's provider in the state as a dill reference to its class, by module path
(``ha_endpoint.readiness.provider.MemberReadinessProvider``, ``ha_endpoint.readiness.drain.MemberDrainProvider``,
``ha_endpoint.readiness.put_back.PutBackProvider``), and updates and deletes the resource with the provider stored
then. These modules resolve those references to the current classes of :mod:`ha_endpoint.gates`; the gate's and the
drain's diff report a changed reference as an in-place update, which records the new path. Nothing else imports them.
"""
