"""Where the chart renderer finds a chart: a directory of unpacked charts, or a download cache.

Layout of both: `<chart>-<version>/` holding the unpacked chart (its `Chart.yaml` at the top), e.g.
`argo-cd-10.1.1/`, `cert-manager-v1.21.1/` (the version exactly as pinned in components/versions.py;
a leading `v` may be left out). `--charts-from DIR` (or `HPCFORGE_CHARTS`) names the directory;
with `--pull-charts`, a chart that is not there is downloaded from its own repository (a classic
Helm repository's `index.yaml`, or an `oci://` reference) with helm-python-sdk's `pull` into the
cache (`HPCFORGE_CHARTS_CACHE`, default `~/.cache/hpcforge/charts`) and unpacked there.

A chart found on disk must say in its `Chart.yaml` the name and version that were asked for: a
git checkout whose `Chart.yaml` still carries a placeholder version (cert-manager's `v0.0.0`) is
refused, since the published chart would differ from it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from components.versions import ChartPin

CHARTS_ENV = "HPCFORGE_CHARTS"
CACHE_ENV = "HPCFORGE_CHARTS_CACHE"


class ChartSourceError(Exception):
    """A chart could not be found, downloaded or is not the version asked for."""


def default_cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "hpcforge" / "charts"


def _bare(version: str) -> str:
    return version[1:] if version.startswith("v") else version


def chart_dir_names(chart: str, version: str) -> list[str]:
    """The folder names a chart may have: `<chart>-<version>` as pinned, and without a leading `v`."""
    names = [f"{chart}-{version}"]
    if _bare(version) != version:
        names.append(f"{chart}-{_bare(version)}")
    return names


def read_chart_yaml(path: Path) -> dict[str, object]:
    try:
        document = yaml.safe_load((path / "Chart.yaml").read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ChartSourceError(f"{path}: not a chart ({error})") from None
    if not isinstance(document, dict):
        raise ChartSourceError(f"{path}/Chart.yaml is not a mapping")
    return document


def verify_chart_dir(path: Path, chart: str, version: str) -> Path:
    """`path` if its Chart.yaml names `chart` at `version`; else a ChartSourceError saying what it holds."""
    meta = read_chart_yaml(path)
    name, found = str(meta.get("name")), str(meta.get("version"))
    if name != chart or _bare(found) != _bare(version):
        raise ChartSourceError(
            f"{path}/Chart.yaml says chart {name!r} version {found!r}, expected {chart!r} version {version!r} "
            "(a git checkout may carry a placeholder version: set the released one, as `helm package --version` does)"
        )
    return path


@dataclass(frozen=True)
class ChartSource:
    """Directories to look in, and whether (and where) to download what is missing."""

    charts_from: Path | None = None
    cache_dir: Path | None = None
    pull: bool = False
    plain_http: bool = False
    """Talk plain HTTP to OCI registries (tests against a local registry only)."""

    @classmethod
    def from_environment(cls, charts_from: Path | None = None, *, pull: bool = False) -> ChartSource:
        if charts_from is None and os.environ.get(CHARTS_ENV):
            charts_from = Path(os.environ[CHARTS_ENV])
        return cls(charts_from=charts_from, cache_dir=default_cache_dir(), pull=pull)

    def _search_dirs(self) -> Sequence[Path]:
        return [d for d in (self.charts_from, self.cache_dir) if d is not None]

    def find(self, pin: ChartPin) -> Path | None:
        for directory in self._search_dirs():
            for name in chart_dir_names(pin.chart, pin.version):
                candidate = directory / name
                if (candidate / "Chart.yaml").is_file():
                    return verify_chart_dir(candidate, pin.chart, pin.version)
        return None

    def locate(self, pin: ChartPin) -> Path:
        """The unpacked chart for `pin`: found on disk, or downloaded into the cache when pulling is on."""
        found = self.find(pin)
        if found is not None:
            return found
        where = " or ".join(str(d / chart_dir_names(pin.chart, pin.version)[0]) for d in self._search_dirs()) or "nowhere"
        if not self.pull:
            raise ChartSourceError(
                f"chart {pin.chart} {pin.version} not found (looked in {where}); unpack it there "
                f"(--charts-from DIR / ${CHARTS_ENV}) or pass --pull-charts to download it from {pin.repository}"
            )
        if self.cache_dir is None:
            raise ChartSourceError("--pull-charts needs a cache directory")
        return pull_chart(pin, self.cache_dir, plain_http=self.plain_http)


def pull_chart(pin: ChartPin, cache_dir: Path, *, plain_http: bool = False) -> Path:
    """Download `pin` from its repository into `cache_dir/<chart>-<version>/` (unpacked)."""
    import helm_python as helm

    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / f"{pin.chart}-{pin.version}"
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".pull-") as scratch:
        try:
            if pin.is_oci:
                helm.pull(pin.oci_reference, version=pin.version, untar=True, untar_dir=scratch, plain_http=plain_http)
            else:
                helm.pull(pin.chart, repo_url=pin.repository, version=pin.version, untar=True, untar_dir=scratch)
        except helm.HelmError as error:
            raise ChartSourceError(f"pulling chart {pin.chart} {pin.version} from {pin.repository}: {error}") from None
        unpacked = Path(scratch) / pin.chart
        if not (unpacked / "Chart.yaml").is_file():
            raise ChartSourceError(f"pulling chart {pin.chart} {pin.version}: the archive holds no {pin.chart}/Chart.yaml")
        verify_chart_dir(unpacked, pin.chart, pin.version)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(unpacked), target)
    return target
