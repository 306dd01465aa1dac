"""The two shapes of a rule: a check of one resource and a check of the whole stack."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .knobs import RuleConfig
from .view import ResourceView, StackView, Violation

C = TypeVar("C", bound=RuleConfig)


@dataclass(frozen=True)
class ResourceRule(Generic[C]):
    """A check of one resource: `check(resource, config) -> [message, ...]`."""

    name: str
    description: str
    config: type[C]
    check: Callable[[ResourceView, C], list[str]]
    remediation: str = ""

    def __call__(self, resource: ResourceView, config: C | None = None) -> list[str]:
        return self.check(resource, config if config is not None else self.config())


@dataclass(frozen=True)
class StackRule(Generic[C]):
    """A check of the whole stack: `check(stack, config) -> [Violation, ...]`."""

    name: str
    description: str
    config: type[C]
    check: Callable[[StackView, C], list[Violation]]
    remediation: str = ""

    def __call__(self, stack: StackView, config: C | None = None) -> list[Violation]:
        return self.check(stack, config if config is not None else self.config())


Rule = ResourceRule[Any] | StackRule[Any]
