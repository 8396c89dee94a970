"""The member agent: keeps an endpoint's members following Cluster API control-plane Machines between runs
(``python -m ha_endpoint.agent``; docs/agent.md). :mod:`.machines` is pure and is what the component's
``clusterApi`` member source imports too."""
