"""Argo CD's AppProjects over a whole set of objects: every Application against its AppProject, with the objects its
sync would apply."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...rules.access import get, text
from ...rules.podtemplates import group_of, kind_of, name_of, namespace_of
from ..family import ARGO_GROUP, ARGOCD_NAMESPACE, application_key, mark
from .appproject import Refusal, check_application_sync, scopes_from


@dataclass(frozen=True)
class ApplicationVerdict:
    application: Mapping[str, Any]
    project: str
    refusals: tuple[Refusal, ...]
    synced: int
    """How many rendered objects of the Application were judged (0: only the Application itself)."""

    @property
    def obj(self) -> Mapping[str, Any]:
        return self.application

    @property
    def admitted(self) -> bool:
        return not self.refusals

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(str(refusal) for refusal in self.refusals)

    def lines(self) -> list[str]:
        """The verdict as the admission report prints it, each refusal on a line of its own."""
        synced = f", {self.synced} rendered objects" if self.synced else ", rendered objects not known"
        return [
            f"  {mark(self.admitted)} Application {application_key(self.application)} in project {self.project}{synced}",
            *(f"         {refusal}" for refusal in self.refusals),
        ]


def _default_project() -> dict[str, Any]:
    """Argo CD creates the `default` project permitting everything (util/db/ and docs: projects)."""
    return {
        "metadata": {"name": "default"},
        "spec": {
            "sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    }


def appproject_verdicts(
    objects: Sequence[Mapping[str, Any]],
    synced: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    namespaced: Callable[[str, str], bool] | None = None,
) -> list[ApplicationVerdict]:
    """Every Argo CD Application of `objects` against its AppProject; `synced` maps an Application
    (`namespace/name`) to the objects its sync would apply (the chart rendered), when known.
    `namespaced`: which kinds are namespaced (default: Kubernetes' own and the CRDs among the objects)."""
    if namespaced is None:
        namespaced = scopes_from([*objects, *(o for found in (synced or {}).values() for o in found)])
    projects = {
        (namespace_of(o) or ARGOCD_NAMESPACE, name_of(o)): o
        for o in objects
        if group_of(o) == ARGO_GROUP and kind_of(o) == "AppProject"
    }
    verdicts: list[ApplicationVerdict] = []
    for app in objects:
        if group_of(app) != ARGO_GROUP or kind_of(app) != "Application":
            continue
        project_name = text(get(app, "spec", "project")) or "default"
        project = projects.get((namespace_of(app) or ARGOCD_NAMESPACE, project_name))
        if project is None and project_name == "default":
            project = _default_project()
        rendered = list((synced or {}).get(application_key(app), ()))
        if project is None:
            refusal = Refusal("application", f"AppProject {project_name!r} is not among the objects")
            verdicts.append(ApplicationVerdict(app, project_name, (refusal,), len(rendered)))
            continue
        refusals = check_application_sync(project, app, rendered, namespaced)
        verdicts.append(ApplicationVerdict(app, project_name, tuple(refusals), len(rendered)))
    return verdicts
