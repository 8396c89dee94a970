"""`program_failures` tells the program's own exceptions from the Pulumi SDK's shutdown in what `pulumi up` prints:
the e2e fault tests assert with it that a failed update never shows a traceback of ours."""

from tests.e2e.pulumi_cli import program_failures

INTERRUPTED = """\
    error: update failed
    Traceback (most recent call last):

      File "/cache/engine/bin/pulumi-language-python-exec", line 232, in <module>

        loop.run_until_complete(coro)

      File "/venv/lib/python3.11/site-packages/pulumi/log.py", line 155, in _log

        engine.Log(req)

      File "/usr/lib/python3.11/threading.py", line 274, in __exit__

        def __exit__(self, *args):

    KeyboardInterrupt

Outputs:
"""

MONITOR_GONE = """\
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/pulumi/runtime/resource.py", line 1210, in do_rpc_call
    return monitor.RegisterResource(req)
grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:
	status = StatusCode.UNAVAILABLE
>

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/pulumi/runtime/resource.py", line 1222, in do_rpc_call
    raise Exception("Resource monitor has terminated, shutting down") from None
Exception: Resource monitor has terminated, shutting down
"""

OURS = """\
    Traceback (most recent call last):
      File "/project/components/ha_endpoint/pipeline/run.py", line 40, in run
        raise HaEndpointError("zones.az2.subnet: no such subnet")
    ha_endpoint.core.errors.HaEndpointError: zones.az2.subnet: no such subnet
"""


def test_the_clis_interrupt_of_the_program_is_not_a_failure_of_ours():
    assert program_failures(INTERRUPTED) == []


def test_a_chain_ending_in_the_monitors_shutdown_is_not_a_failure_of_ours():
    assert program_failures(MONITOR_GONE) == []


def test_an_exception_the_program_raised_is_reported_as_printed():
    assert program_failures(INTERRUPTED + OURS) == [
        "ha_endpoint.core.errors.HaEndpointError: zones.az2.subnet: no such subnet"]


def test_output_without_a_traceback_has_no_failures():
    assert program_failures("Resources:\n    + 2 created\n    2 errored\n") == []
