"""What an input of the component is: a value, or an Output of a resource declared beside it (known later).

The core plans and checks and builds nothing, so it imports no Pulumi (``tests/unit/test_layers.py``); yet the values
it is given may be Pulumi's. It names them here: :data:`Input` has the shape of ``pulumi.Input`` (a value, an awaitable
of one, or an ``Output``), which Pulumi's schema inference reads as an input in every language
(``components/schema.json``); :class:`Output` and :class:`Resource` are what an input is checked against. Both are
abstract: the package's entry (:mod:`ha_endpoint.pulumi_types`, which every import of the package runs first)
registers ``pulumi.Output`` and ``pulumi.CustomResource`` as them, and gives :class:`Output` Pulumi's concatenation.
"""

from abc import ABCMeta
from collections.abc import Awaitable
from typing import Any, Callable, ClassVar, Generic, TypeVar, Union

T = TypeVar("T")


class Output(Generic[T], metaclass=ABCMeta):
    """A value of a resource declared beside the component, known once that resource is: ``pulumi.Output``."""

    concat: ClassVar[Callable[..., Any]]
    """``pulumi.Output.concat``: the strings and Outputs given, as one Output of their concatenation."""

    @classmethod
    def implemented_by(cls, output: Any) -> None:
        """Make ``output`` (``pulumi.Output``) what the core checks for and concatenates with."""
        cls.register(output)
        cls.concat = staticmethod(output.concat)


class Resource(metaclass=ABCMeta):
    """A resource of the stack, e.g. a server a member is given as (``pulumi.CustomResource``): its ``id`` is an
    Output."""


Input = Union[T, Awaitable[T], "Output[T]"]
"""A value, an awaitable of one, or an Output of one: ``pulumi.Input``'s very shape (the forward reference
``"Output[T]"`` included, which the schema inference recognises by its text and pydantic resolves where the argument
classes are defined: :mod:`ha_endpoint.core.args` names :class:`Output` and ``T`` for it)."""


def is_output(value: Any) -> bool:
    """Whether an input is not a plain value yet: an Output (or an awaitable) of a resource declared beside."""
    return isinstance(value, Output) or (value is not None and not isinstance(value, (str, int, float, bool))
                                         and hasattr(value, "__await__"))


def plain(*values: object) -> bool:
    """Whether every value is known now (no Output of a resource declared beside the component): a rule over values
    that are not is checked once they are known (:mod:`ha_endpoint.pipeline`)."""
    return not any(is_output(value) for value in values)


def joined(*parts: Any) -> Any:
    """The parts as one string, or an Output of it when one of them is not known yet (the one place the core makes an
    Output: the inputs are Pulumi's here)."""
    if plain(*parts):
        return "".join(parts)
    return Output.concat(*parts)
