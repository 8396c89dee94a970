"""Compatibility for stacks deployed before the component was the ``ha_endpoint`` package (it was ``components``).

Pulumi stores a dynamic resource's provider as a dill reference to its class (``components.readiness.provider.
MemberReadinessProvider``) and deletes the resource with the provider stored then. These two modules let the dynamic
provider process (started in the project directory) resolve those references to the current classes, so that such
resources can still be deleted; every update re-records the reference under ``ha_endpoint`` (the providers' diff
reports a changed reference as an in-place update). Not part of the installed package.
"""
