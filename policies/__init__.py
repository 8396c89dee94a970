"""The ha-endpoint CrossGuard policy pack.

Importing this package (or any rule in :mod:`policies.rules`) starts nothing: the rules are pure functions from the
resources the engine shows the pack to violation messages, and :mod:`policies.pack` only wraps them in
``pulumi_policy`` policy objects. The pack's server starts in ``policies/__main__.py``, which the Pulumi CLI runs for
``pulumi preview --policy-pack policies``.
"""
