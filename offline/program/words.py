"""Counts in words, for what the offline tool prints."""

from __future__ import annotations


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``1 resource``, ``2 resources``, ``0 resources``; ``NetworkPolicy`` -> ``NetworkPolicies``."""
    return f"{count} {singular if count == 1 else plural_form or pluralize(singular)}"


def pluralize(word: str) -> str:
    """English plural of a type name: ``NetworkPolicy`` -> ``NetworkPolicies``, ``Ingress`` -> ``Ingresses``."""
    if word.endswith("Bytes"):  # RandomBytes
        return word
    if word.endswith("y") and word[-2:-1].lower() not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"
