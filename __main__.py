"""The ha-endpoint Pulumi program: the dev stack's (or any stack's) endpoint, built by stacks/endpoint_stack.py."""

from stacks.endpoint_stack import main

main()
