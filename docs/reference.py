"""The configuration reference (docs/configuration.md), written from the pydantic models.

The generator walks `PlatformConfig` generically: nested models, optional values, lists and tuples
(items are written `[]`), mappings (keys are written `<key>`), unions of models (each variant is
documented; discriminated unions also get a row for their tag). Types are read from the annotations
and their constraints, descriptions from field docstrings or `Field(description=...)`, with the
model's class docstring as a fallback. The output depends only on the models: it is deterministic.
`python -m docs.generate` writes it (docs/generate.py).
"""

from __future__ import annotations

import enum
import json
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, Discriminator
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from components.paths import PROJECT_ROOT
from docs.forms import FIELD_VALIDATORS, NAMED_VALIDATORS, SIMPLE_TYPES

OUTPUT = PROJECT_ROOT / "docs" / "configuration.md"
NAMESPACE = "hpcforge"

_LIST_ORIGINS: tuple[Any, ...] = (list, tuple, set, frozenset, Sequence, Iterable)
_MAPPING_ORIGINS: tuple[Any, ...] = (dict, Mapping)


class _Missing:
    """Marker: no inherited default (the parent object has no default instance)."""


MISSING = _Missing()
COMPUTED = _Missing()
"""Marker: a default factory that needs the other keys' values."""


@dataclass(frozen=True)
class Row:
    """One documented key path."""

    path: str
    """The key as users write it, e.g. `hpcforge:network.pools[].addresses`."""
    value_type: str
    default: str
    """The rendered default, or `required`."""
    description: str
    sources: tuple[tuple[type[BaseModel], str], ...] = ()
    """The (model, field name) pairs the row documents (a union's tag row documents each variant's tag)."""

    @property
    def required(self) -> bool:
        return self.default == "required"


@dataclass(frozen=True)
class Section:
    key: str
    """`hpcforge:<key>`."""
    intro: str
    rows: tuple[Row, ...]
    required: bool


@dataclass
class _Shape:
    """An annotation with its Annotated metadata split off and `None` taken out of unions."""

    tp: Any
    metadata: list[Any] = field(default_factory=list)
    nullable: bool = False
    discriminator: str | None = None


# --- reading annotations ----------------------------------------------------------------------------------


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (typing.Union, types.UnionType)


def _shape(tp: Any, metadata: Iterable[Any] = (), discriminator: Any = None) -> _Shape:
    shape = _Shape(tp=tp, metadata=list(metadata))
    _set_discriminator(shape, discriminator)
    while True:
        if get_origin(shape.tp) is typing.Annotated:
            base, *extra = get_args(shape.tp)
            shape.tp = base
            for item in extra:
                if isinstance(item, FieldInfo):
                    shape.metadata.extend(item.metadata)
                    _set_discriminator(shape, item.discriminator)
                elif isinstance(item, Discriminator):
                    _set_discriminator(shape, item)
                else:
                    shape.metadata.append(item)
            continue
        if _is_union(shape.tp):
            members = [arg for arg in get_args(shape.tp) if arg is not type(None)]
            if len(members) < len(get_args(shape.tp)):
                shape.nullable = True
                shape.tp = members[0] if len(members) == 1 else typing.Union[tuple(members)]  # noqa: UP007
                continue
        if type(shape.tp).__name__ == "TypeAliasType":  # `type X = ...` (Python 3.12+)
            shape.tp = shape.tp.__value__
            continue
        return shape


def _set_discriminator(shape: _Shape, discriminator: Any) -> None:
    if isinstance(discriminator, str):
        shape.discriminator = discriminator
    elif isinstance(discriminator, Discriminator) and isinstance(discriminator.discriminator, str):
        shape.discriminator = discriminator.discriminator


def _item_type(tp: Any) -> Any:
    args = [arg for arg in get_args(tp) if arg is not Ellipsis]
    return args[0] if args else Any


def _models_in(tp: Any) -> list[type[BaseModel]]:
    """The models among the members of a union (or the model itself)."""
    if _is_model(tp):
        return [tp]
    if _is_union(tp):
        return [member for member in (_shape(arg).tp for arg in get_args(tp)) if _is_model(member)]
    return []


def _validator_name(metadata: Sequence[Any]) -> str | None:
    """The named type given by a validator (AfterValidator(_ipv4) -> 'IPv4 address')."""
    for item in metadata:
        func: Callable[..., Any] | None = getattr(item, "func", None)
        if func is None or not callable(func):
            continue
        qualified = f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', '')}"
        if qualified in NAMED_VALIDATORS:
            return NAMED_VALIDATORS[qualified]
        name = getattr(func, "__name__", "")
        if name and name != "<lambda>":
            return re.sub(r"^validate ", "", name.strip("_").replace("_", " "))
    return None


def _qualified(func: Any) -> str:
    return f"{getattr(func, '__module__', '')}.{getattr(func, '__qualname__', '')}"


def field_validator_names(model: type[BaseModel], name: str) -> list[str]:
    """Qualified names of the `@field_validator` methods of `model` that check the field `name`."""
    found = []
    for decorator in model.__pydantic_decorators__.field_validators.values():
        if name in decorator.info.fields or "*" in decorator.info.fields:
            found.append(_qualified(decorator.func))
    return found


def validators_without_form(root: type[BaseModel] | None = None) -> list[str]:
    """`key: validator` for each validator of a documented key whose accepted form the generator does not know
    (an Annotated validator missing from NAMED_VALIDATORS, a @field_validator missing from FIELD_VALIDATORS)."""
    missing: list[str] = []
    for section in build_sections(root):
        for row in section.rows:
            for owner, name in row.sources:
                info = owner.model_fields[name]
                metadata = list(info.metadata)
                for arg in get_args(info.annotation):
                    metadata.extend(getattr(arg, "__metadata__", ()))
                    for inner in get_args(arg):
                        metadata.extend(getattr(inner, "__metadata__", ()))
                for item in metadata:
                    func = getattr(item, "func", None)
                    if callable(func) and _qualified(func) not in NAMED_VALIDATORS:
                        missing.append(f"{row.path}: {_qualified(func)}")
                for qualified in field_validator_names(owner, name):
                    if qualified not in FIELD_VALIDATORS:
                        missing.append(f"{row.path}: {qualified}")
    return sorted(set(missing))


def _constraint(metadata: Sequence[Any], name: str) -> Any:
    for item in metadata:
        value = getattr(item, name, None)
        if value is not None and not isinstance(item, FieldInfo):
            return value
    return None


def _number(value: Any) -> str:
    return json.dumps(value) if isinstance(value, int | float) else str(value)


def _bounds(metadata: Sequence[Any]) -> str:
    ge, gt, le, lt = (_constraint(metadata, name) for name in ("ge", "gt", "le", "lt"))
    low = f"{_number(ge)}" if ge is not None else None
    high = f"{_number(le)}" if le is not None else None
    if low is not None and high is not None and gt is None and lt is None:
        return f"{low}..{high}"
    parts = []
    if ge is not None:
        parts.append(f">= {_number(ge)}")
    if gt is not None:
        parts.append(f"> {_number(gt)}")
    if le is not None:
        parts.append(f"<= {_number(le)}")
    if lt is not None:
        parts.append(f"< {_number(lt)}")
    return ", ".join(parts)


def _length(metadata: Sequence[Any], unit: str) -> str:
    low, high = _constraint(metadata, "min_length"), _constraint(metadata, "max_length")
    plural = f"{unit}s"
    if low is not None and high is not None:
        return f"{low}..{high} {plural}"
    if low is not None:
        return f"at least {low} {unit if low == 1 else plural}"
    if high is not None:
        return f"at most {high} {unit if high == 1 else plural}"
    return ""


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


def _with(text: str, *details: str) -> str:
    details = tuple(detail for detail in details if detail)
    return f"{text} ({', '.join(details)})" if details else text


def describe_type(tp: Any, metadata: Sequence[Any] = (), discriminator: Any = None) -> str:
    """A human-readable type: `integer (1..16)`, `list of IPv4 address`, `one of 'l2' | 'bgp'`..."""
    shape = _shape(tp, metadata, discriminator)
    text = _describe(shape)
    return f"{text} or null" if shape.nullable and not text.endswith(" or null") else text


def _describe(shape: _Shape) -> str:  # noqa: PLR0911, PLR0912 (one return per shape of a config type)
    tp, metadata = shape.tp, shape.metadata
    origin = get_origin(tp)
    named = _validator_name(metadata)
    if origin is Literal:
        return "one of " + " | ".join(_literal(value) for value in get_args(tp))
    if named is not None:
        return _with(named, _length(metadata, "character"), _pattern(metadata))
    if tp is bool:
        return "boolean"
    if tp is int:
        return _with("integer", _bounds(metadata))
    if tp is float:
        return _with("number", _bounds(metadata))
    if tp is str:
        return _with("string", _length(metadata, "character"), _pattern(metadata))
    if tp is Any or tp is object:
        return "any value"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of " + " | ".join(_literal(member.value) for member in tp)
    if isinstance(tp, type) and tp in SIMPLE_TYPES:
        return _with(SIMPLE_TYPES[tp], _length(metadata, "character"))
    if _is_model(tp):
        return "object"
    if origin in _LIST_ORIGINS:
        item = describe_type(_item_type(tp))
        if item.startswith("one of "):
            return _with(f"list, each {item}", _length(metadata, "item"))
        if item.startswith("object"):
            item = "objects" + item.removeprefix("object")
        return _with(f"list of {item}", _length(metadata, "item"))
    if origin in _MAPPING_ORIGINS or tp in (dict, Mapping):
        args = get_args(tp)
        if len(args) == 2:
            key, value = describe_type(args[0]), describe_type(args[1])
            return _with(f"mapping of {key} to {value}", _length(metadata, "entry"))
        return "mapping"
    if _is_union(tp):
        models = _models_in(tp)
        members = [arg for arg in get_args(tp)]
        if models and len(models) == len(members):
            if shape.discriminator:
                tags = " | ".join(_literal(tag) for model in models for tag in _tags(model, shape.discriminator))
                return f"object, one of {len(models)} variants chosen by `{_alias_of(models[0], shape.discriminator)}`: {tags}"
            return f"object, one of {len(models)} variants"
        return " or ".join(describe_type(member) for member in members)
    if isinstance(tp, type):
        return tp.__name__
    return str(tp)


def _pattern(metadata: Sequence[Any]) -> str:
    pattern = _constraint(metadata, "pattern")
    return f"pattern `{pattern}`" if pattern else ""


def _alias_of(model: type[BaseModel], name: str) -> str:
    info = model.model_fields.get(name)
    if info is None:  # the discriminator may be given by its alias
        return name
    return _alias(name, info)


def _alias(name: str, info: FieldInfo) -> str:
    if isinstance(info.validation_alias, str):
        return info.validation_alias
    return info.alias or name


def _tags(model: type[BaseModel], discriminator: str) -> list[Any]:
    info = model.model_fields.get(discriminator)
    if info is None:
        info = next((i for n, i in model.model_fields.items() if _alias(n, i) == discriminator), None)
    if info is None:
        return []
    shape = _shape(info.annotation, info.metadata)
    return list(get_args(shape.tp)) if get_origin(shape.tp) is Literal else []


def _field_named(model: type[BaseModel], name: str) -> str | None:
    if name in model.model_fields:
        return name
    return next((n for n, i in model.model_fields.items() if _alias(n, i) == name), None)


# --- descriptions and defaults -------------------------------------------------------------------------------


def clean(text: str | None) -> str:
    """One line of Markdown-table-safe text."""
    if not text:
        return ""
    return " ".join(text.split()).replace("|", "\\|")


def class_doc(model: Any) -> str:
    """A model's own docstring (not inherited from its base classes)."""
    if not _is_model(model):
        return ""
    doc = model.__dict__.get("__doc__")
    return clean(doc) if isinstance(doc, str) else ""


def _fallback_doc(tp: Any) -> str:
    shape = _shape(tp)
    if get_origin(shape.tp) in _LIST_ORIGINS or get_origin(shape.tp) in _MAPPING_ORIGINS:
        args = get_args(shape.tp)
        inner = args[-1] if get_origin(shape.tp) in _MAPPING_ORIGINS and len(args) == 2 else _item_type(shape.tp)
        return _fallback_doc(inner)
    models = _models_in(shape.tp)
    return class_doc(models[0]) if len(models) == 1 else ""


def render_value(value: Any) -> str:
    """A default as users would write it in the stack file."""
    data = to_jsonable_python(value, by_alias=True)
    if isinstance(data, str):
        text = data if data and data.strip() == data else json.dumps(data)
    else:
        text = json.dumps(data, separators=(", ", ": "), ensure_ascii=False)
    return f"`{text}`".replace("|", "\\|")


def _default_of(info: FieldInfo) -> Any:
    if info.is_required():
        return MISSING
    try:
        return info.get_default(call_default_factory=True, validated_data={})
    except Exception:  # a factory that needs the other fields' values
        return COMPUTED


# --- walking the models ----------------------------------------------------------------------------------------


def field_rows(
    path: str, owner: type[BaseModel], name: str, info: FieldInfo, inherited: Any = MISSING, note: str = ""
) -> list[Row]:
    """The row of one field and the rows of everything nested in it."""
    shape = _shape(info.annotation, info.metadata, info.discriminator)
    if inherited is not MISSING:
        value, required = inherited, False
    else:
        value = _default_of(info)
        required = info.is_required()
    if required:
        default = "required"
    elif value is COMPUTED:
        default = "computed from the other keys"
    elif isinstance(value, BaseModel) and not _is_union(shape.tp):
        default = "see keys below"
    else:
        default = render_value(value)
    description = clean(info.description) or _fallback_doc(info.annotation)
    if note:
        description = f"{note} {description}".strip()
    value_type = describe_type(info.annotation, info.metadata, info.discriminator)
    forms = [form for form in (FIELD_VALIDATORS.get(q) for q in field_validator_names(owner, name)) if form]
    if forms:
        value_type = f"{value_type}: {'; '.join(forms)}"
    row = Row(
        path=path,
        value_type=value_type,
        default=default,
        description=description,
        sources=((owner, name),),
    )
    child_default = value if isinstance(value, BaseModel) else MISSING
    return [row, *nested_rows(path, shape, child_default, note)]


def nested_rows(path: str, shape: _Shape, inherited: Any = MISSING, note: str = "") -> list[Row]:
    """Rows for the keys inside a value of this shape (none for scalars)."""
    tp = shape.tp
    origin = get_origin(tp)
    if _is_model(tp):
        return model_rows(path, tp, inherited, note)
    if origin in _LIST_ORIGINS:
        return nested_rows(f"{path}[]", _shape(_item_type(tp)), MISSING, note)
    if origin in _MAPPING_ORIGINS:
        args = get_args(tp)
        return nested_rows(f"{path}.<key>", _shape(args[1]), MISSING, note) if len(args) == 2 else []
    if _is_union(tp):
        return _variant_rows(path, shape, inherited, note)
    return []


_WALKING: list[type[BaseModel]] = []
"""The models being walked, outermost first: a model that contains itself is documented once."""


def model_rows(path: str, model: type[BaseModel], inherited: Any = MISSING, note: str = "", skip: str | None = None) -> list[Row]:
    if model in _WALKING:
        return []
    _WALKING.append(model)
    try:
        rows: list[Row] = []
        for name, info in model.model_fields.items():
            if name == skip:
                continue
            value = getattr(inherited, name) if isinstance(inherited, model) else MISSING
            rows.extend(field_rows(f"{path}.{_alias(name, info)}", model, name, info, value, note))
        return rows
    finally:
        _WALKING.pop()


def _variant_rows(path: str, shape: _Shape, inherited: Any, note: str) -> list[Row]:
    models = _models_in(shape.tp)
    if not models:
        return []
    rows: list[Row] = []
    disc = shape.discriminator
    if disc is not None:
        key = _alias_of(models[0], disc)
        tags = [(model, tag) for model in models for tag in _tags(model, disc)]
        documented = [f"`{tag}`: {class_doc(model).rstrip('.')}" for model, tag in tags if class_doc(model)]
        explained = f" ({'; '.join(documented)})" if documented else ""
        description = f"{note} Selects the variant{explained}.".strip()
        rows.append(
            Row(
                path=f"{path}.{key}",
                value_type="one of " + " | ".join(_literal(tag) for _, tag in tags),
                default="required",
                description=description,
                sources=tuple(
                    (model, name) for model in models if (name := _field_named(model, disc) or "") in model.model_fields
                ),
            )
        )
    for model in models:
        if disc is not None:
            label = " or ".join(f"`{_alias_of(model, disc)}: {tag}`" for tag in _tags(model, disc))
            variant_note = f"{note} Only with {label}.".strip()
            skip = _field_named(model, disc)
        else:
            doc = class_doc(model).rstrip(".")
            form = f"{model.__name__} form ({doc})" if doc else f"{model.__name__} form"
            variant_note = f"{note} Only in the {form}.".strip()
            skip = None
        rows.extend(model_rows(path, model, inherited, variant_note, skip=skip))
    return rows


def build_sections(root: type[BaseModel] | None = None) -> list[Section]:
    """One section per `hpcforge:<key>` of the root model (PlatformConfig by default)."""
    if root is None:
        from components.site.root import PlatformConfig

        root = PlatformConfig
    sections: list[Section] = []
    for name, info in root.model_fields.items():
        key = f"{NAMESPACE}:{_alias(name, info)}"
        rows = field_rows(key, root, name, info)
        intro_parts = [clean(info.description), _fallback_doc(info.annotation)]
        intro = " ".join(dict.fromkeys(part for part in intro_parts if part))
        sections.append(Section(key=key, intro=intro, rows=tuple(rows), required=rows[0].required))
    return sections


def all_rows(root: type[BaseModel] | None = None) -> list[Row]:
    return [row for section in build_sections(root) for row in section.rows]


# --- Markdown ---------------------------------------------------------------------------------------------------


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def render(root: type[BaseModel] | None = None) -> str:
    sections = build_sections(root)
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated by `python -m docs.generate` (make docs) from the pydantic models in",
        "     components/site/ and the layers' config. Do not edit by hand: `make docs-check` fails when this file is stale. -->",
        "",
        f"Every key below goes under `config:` in `Pulumi.<stack>.yaml`, in the `{NAMESPACE}:` namespace. Nested keys",
        "are written as YAML mappings under their top-level key; `[]` stands for every item of a list and",
        "`<key>` for every key of a mapping. Keys are camelCase, exactly as written here: unknown keys are",
        "refused. `required` keys inside an optional object are required only when that object is given.",
        "",
        "Values are read as the Pulumi CLI reads them (gopkg.in/yaml.v3, see `components/ground/yamlv3.py`): only",
        "`true`, `True`, `TRUE`, `false`, `False`, `FALSE` are booleans, so `yes`, `no`, `on`, `off` and `NO` are strings; `30:00`",
        "is a string; an integer with a leading zero (`010000`, which the CLI reads as octal 4096), an",
        "unquoted date, `.inf`, `!!binary`, `!!set` or any other YAML tag, a key given twice, a non-string key,",
        "nesting deeper than 64 levels and excessive aliasing are refused, naming the key. No string may hold a",
        "line break, tab or NUL (they are written into configuration files), except script texts and command",
        "arguments; integers never accept `true`/`false`.",
        "",
        "| key | required | description |",
        "| --- | --- | --- |",
    ]
    for section in sections:
        summary = section.intro.split(". ")[0].rstrip(".")
        lines.append(f"| [`{section.key}`](#{_anchor(section.key)}) | {'yes' if section.required else 'no'} | {summary} |")
    for section in sections:
        lines += ["", f"## {section.key}", ""]
        if section.intro:
            lines += [section.intro.replace("\\|", "|"), ""]
        lines += ["| key | type | default | description |", "| --- | --- | --- | --- |"]
        for row in section.rows:
            type_text = row.value_type.replace("|", "\\|")
            lines.append(f"| `{row.path}` | {type_text} | {row.default} | {row.description} |")
    return "\n".join(lines) + "\n"
