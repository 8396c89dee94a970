"""HaEndpoint as a Pulumi component package: the provider host other languages use (``components/__main__.py``).

It is Pulumi's Python component provider (``pulumi.provider.experimental``: the schema inferred from
:mod:`ha_endpoint.core.args`, the component constructed on request) with two additions:

- Integer inputs stay integers. ``ComponentProvider.map_input_properties`` (pulumi 3.272.0) converts an integer
  input, which arrives as a float (``6443.0``: protobuf numbers are doubles), to ``int`` and then overwrites the
  result with the float, so the strict integer fields (ports, delays, timeouts, ttl, weights) would refuse every
  number a YAML or TypeScript program gives. :class:`EndpointProvider` converts whole floats of integer properties
  back, at every nesting level.
- The readiness gates and drains are served here (:mod:`ha_endpoint.gates.hosted` says why): the host answers
  check/diff/create/update/read/delete for ``haendpoint:index:MemberReadiness`` and ``haendpoint:index:MemberDrain``
  with the dynamic providers' own classes, in this process's virtualenv, blocking calls in worker threads.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import traceback
from importlib import import_module
from importlib.metadata import version as distribution_version
from typing import Any

import grpc
import grpc.aio
from google.protobuf import empty_pb2
from pulumi.dynamic import Config, ConfigureRequest, ResourceProvider
from pulumi.provider.experimental.analyzer import PropertyType
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ProviderServicer
from pulumi.runtime import proto, rpc
from pulumi.runtime._grpc_settings import _GRPC_CHANNEL_OPTIONS
from pulumi.runtime.proto import provider_pb2_grpc

from .backends import REGISTRY
from .gates import hosted
from .resources.endpoint import HaEndpoint


class EndpointProvider(ComponentProvider):
    """Pulumi's component provider for HaEndpoint, with integer inputs kept integers."""

    def map_input_properties(self, inputs, properties, mapping, component_name, property_path):
        mapped = super().map_input_properties(inputs, properties, mapping, component_name, property_path)
        for schema_name, prop in properties.items():
            value = mapped.get(mapping[schema_name])
            if prop.type == PropertyType.INTEGER and isinstance(value, float) and value.is_integer():
                mapped[mapping[schema_name]] = int(value)
        return mapped


def endpoint_provider() -> EndpointProvider:
    """The package's provider: HaEndpoint under the package name of its type token, the distribution's version.

    Its schema is inferred here, with the garbage collector held: Pulumi's analyzer reads every description with
    ``ast.parse`` and drops one silently when that raises, and CPython before 3.11.8 raises ``SystemError: AST
    constructor recursion depth mismatch`` when a collection inside ``ast.parse`` runs a finalizer (CPython
    gh-106905). Seen in the unit suite: an enum value's description missing from the schema after the tests before it
    left asyncio futures with unretrieved exceptions, whose finalizers log. Held is enough: no collection runs while it
    is off (a full collection first only walked the whole heap: 1.7 s each time in a unit-test worker)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return EndpointProvider([HaEndpoint], hosted.PACKAGE, version=distribution_version("ha-endpoint"))
    finally:
        if collecting:
            gc.enable()


def hosted_types() -> dict[str, str]:
    """Every type the host serves -> its provider class (``module:class``): the gates' and each backend's own."""
    return {**hosted.HOSTED_TYPES, **{hosted.hosted_type(name): path for backend in REGISTRY.values()
                                      for name, path in backend.hosted_types.items()}}


def _plain(props: Any) -> dict[str, Any]:
    """Properties as the dynamic providers get them: secrets unwrapped (gates and drains hold nothing secret)."""
    return {key: rpc.unwrap_rpc_secret(value) for key, value in dict(props or {}).items()}


class HostServicer(ProviderServicer):
    """The provider host's gRPC service: construct (the component), and the CRUD of the hosted gates and drains."""

    def __init__(self, provider: EndpointProvider, args: list[str], engine_address: str) -> None:
        super().__init__(provider, args, engine_address)
        self._config: dict[str, Any] = {}
        self._resource_providers: dict[str, ResourceProvider] = {}

    def _resource_provider(self, urn: str) -> ResourceProvider:
        """The configured provider instance of the hosted type named in ``urn`` (one per type and process)."""
        type_ = urn.split("::")[2].split("$")[-1]
        if type_ not in self._resource_providers:
            served = hosted_types()
            if type_ not in served:
                raise ValueError(f"{hosted.PACKAGE} serves no resource of type {type_}")
            module, name = served[type_].split(":")
            provider = getattr(import_module(module), name)()
            provider.configure(ConfigureRequest(Config(raw_config=self._config, project_name="")))
            self._resource_providers[type_] = provider
        return self._resource_providers[type_]

    @staticmethod
    async def _serialize(props: dict[str, Any]):
        return await rpc.serialize_properties(props, {})

    async def _call(self, context, urn: str, method: str, *args):
        """Run a method of the provider of ``urn``'s type in a worker thread; a failure ends the call with its
        message (as the dynamic provider host reports it)."""
        try:
            return await asyncio.to_thread(lambda: getattr(self._resource_provider(urn), method)(*args))
        except Exception:  # noqa: BLE001 - every failure is the resource operation's error, reported to the engine
            await context.abort(grpc.StatusCode.UNKNOWN, traceback.format_exc())

    async def Configure(self, request, context):
        config = rpc.deserialize_properties(request.args)
        self._config = {key: rpc.unwrap_rpc_secret(value) for key, value in config.items()}
        self._resource_providers.clear()
        return await super().Configure(request, context)

    async def Check(self, request, context):
        olds = _plain(rpc.deserialize_properties(request.olds, True))
        news = _plain(rpc.deserialize_properties(request.news, True))
        result = await self._call(context, request.urn, "check", olds, news)
        failures = [proto.CheckFailure(property=f.property, reason=f.reason) for f in result.failures or []]
        return proto.CheckResponse(inputs=await self._serialize(result.inputs), failures=failures)

    async def Diff(self, request, context):
        olds = _plain(rpc.deserialize_properties(request.olds, True))
        news = _plain(rpc.deserialize_properties(request.news, True))
        result = await self._call(context, request.urn, "diff", request.id, olds, news)
        fields: dict[str, Any] = {"changes": proto.DiffResponse.DIFF_UNKNOWN if result.changes is None else
                                  proto.DiffResponse.DIFF_SOME if result.changes else proto.DiffResponse.DIFF_NONE}
        if result.replaces:
            fields["replaces"] = result.replaces
        if result.delete_before_replace is not None:
            fields["deleteBeforeReplace"] = result.delete_before_replace
        return proto.DiffResponse(**fields)

    async def Create(self, request, context):
        props = _plain(rpc.deserialize_properties(request.properties))
        result = await self._call(context, request.urn, "create", props)
        return proto.CreateResponse(id=result.id, properties=await self._serialize(result.outs or {}))

    async def Update(self, request, context):
        olds = _plain(rpc.deserialize_properties(request.olds))
        news = _plain(rpc.deserialize_properties(request.news))
        result = await self._call(context, request.urn, "update", request.id, olds, news)
        return proto.UpdateResponse(properties=await self._serialize(result.outs or {}))

    async def Read(self, request, context):
        props = _plain(rpc.deserialize_properties(request.properties)) or _plain(
            rpc.deserialize_properties(request.inputs))
        result = await self._call(context, request.urn, "read", request.id, props)
        fields: dict[str, Any] = {"id": result.id, "properties": await self._serialize(result.outs or {})}
        if result.inputs is not None:
            fields["inputs"] = await self._serialize(result.inputs)
        return proto.ReadResponse(**fields)

    async def Delete(self, request, context):
        props = _plain(rpc.deserialize_properties(request.properties))
        await self._call(context, request.urn, "delete", request.id, props)
        return empty_pb2.Empty()


def serve(args: list[str]) -> None:
    """Run the provider host (what ``pulumi.provider.main`` does, with :class:`HostServicer`): print the port, serve
    until the engine goes away."""
    hosted.HOSTED = True
    parser = argparse.ArgumentParser(description="ha-endpoint component provider (gRPC server)")
    parser.add_argument("engine", help="Pulumi engine address")
    known, _ = parser.parse_known_args(args)
    provider = endpoint_provider()

    async def run() -> None:
        server = grpc.aio.server(options=_GRPC_CHANNEL_OPTIONS)
        provider_pb2_grpc.add_ResourceProviderServicer_to_server(HostServicer(provider, args, known.engine), server)
        port = server.add_insecure_port(address="127.0.0.1:0")
        await server.start()
        sys.stdout.buffer.write(f"{port}\n".encode())
        sys.stdout.buffer.flush()
        await server.wait_for_termination()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
