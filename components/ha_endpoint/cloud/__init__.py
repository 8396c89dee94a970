"""The cloud layer: everything that asks OpenStack, below the pipeline and above the core.

One connection and one classification of failures (:mod:`.connection`), the retry policy beside them
(:mod:`.retry`), what a call can end in (:mod:`.errors`), the provider-invoke lookups of the cloud facts
(:mod:`.lookups`) and what only openstacksdk answers at preview (:mod:`.catalog`).
"""
