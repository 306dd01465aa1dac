"""Every third-party chart and image that hpcforge deploys, pinned in one place.

Bump a version here and nowhere else: the chart helper, the schema tier (which reads the chart's
default values from ../shared/charts/<chart>-<version>) and the policy packs all read these pins. Moving a pin whose
admission policies/admission/ reproduces (argo-cd, cert-manager, kueue, mariadb-operator, metallb, slurm-operator,
KUBERNETES_VERSION) fails tests/policies/admission/test_admission_pins.py, naming the module, until its REPRODUCES says the new release.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChartPin:
    chart: str
    version: str
    repository: str
    """`https://...` for a classic Helm repository, `oci://registry/path` for an OCI registry."""
    values_dir: str | None = None
    """Folder under ../shared/charts holding the chart's default values (None: the chart has none)."""

    @property
    def is_oci(self) -> bool:
        return self.repository.startswith("oci://")

    @property
    def oci_reference(self) -> str:
        """`oci://registry/path/chart`, the form `helm template` and helm.v4.Chart take."""
        return f"{self.repository.rstrip('/')}/{self.chart}"

    @property
    def argocd_repo_url(self) -> str:
        """Argo CD takes OCI Helm repositories without the scheme; public registries need no repository
        Secret (Argo CD 3.x treats a scheme-less repoURL as OCI)."""
        return self.repository.removeprefix("oci://") if self.is_oci else self.repository


@dataclass(frozen=True)
class ImagePin:
    repository: str
    tag: str
    digest: str | None = None
    """`sha256:<64 hex>` of the image the tag named when it was pinned (`crane digest <repository>:<tag>`): the
    reference then names that image whatever the tag later points at (docs/operations.md, "Pinning images by
    digest"). None: not resolved yet; the security pack's images-by-digest lists each such image in prod."""

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}" + (f"@{self.digest}" if self.digest else "")


@dataclass(frozen=True)
class ManifestPin:
    """Software without a maintained chart, applied from its release manifest at a pinned version."""

    name: str
    version: str
    url: str


ARGO_HELM = "https://argoproj.github.io/argo-helm"
NVIDIA_HELM = "https://helm.ngc.nvidia.com/nvidia"


class Charts:
    ARGO_CD = ChartPin("argo-cd", "10.1.1", ARGO_HELM, "argo-cd-10.1.1")
    CERT_MANAGER = ChartPin("cert-manager", "v1.21.1", "oci://quay.io/jetstack/charts", "cert-manager-1.21.1")
    SEALED_SECRETS = ChartPin(
        "sealed-secrets", "2.18.5", "https://bitnami-labs.github.io/sealed-secrets", "sealed-secrets-2.18.5"
    )
    METALLB = ChartPin("metallb", "0.16.1", "https://metallb.github.io/metallb", "metallb-0.16.1")
    TRAEFIK = ChartPin("traefik", "41.3.0", "https://traefik.github.io/charts", "traefik-41.3.0")
    MARIADB_OPERATOR_CRDS = ChartPin("mariadb-operator-crds", "26.6.0", "https://mariadb-operator.github.io/mariadb-operator")
    MARIADB_OPERATOR = ChartPin(
        "mariadb-operator", "26.6.0", "https://mariadb-operator.github.io/mariadb-operator", "mariadb-operator-26.6.0"
    )
    SLURM_OPERATOR_CRDS = ChartPin("slurm-operator-crds", "1.2.1", "oci://ghcr.io/slinkyproject/charts")
    SLURM_OPERATOR = ChartPin("slurm-operator", "1.2.1", "oci://ghcr.io/slinkyproject/charts", "slurm-operator-1.2.1")
    KUEUE = ChartPin("kueue", "0.19.2", "oci://registry.k8s.io/kueue/charts", "kueue-0.19.2")
    ARGO_WORKFLOWS = ChartPin("argo-workflows", "1.0.18", ARGO_HELM, "argo-workflows-1.0.18")
    KUBE_PROMETHEUS_STACK = ChartPin(
        "kube-prometheus-stack",
        "88.5.3",
        "https://prometheus-community.github.io/helm-charts",
        "kube-prometheus-stack-88.5.3",
    )
    GPU_OPERATOR = ChartPin("gpu-operator", "v26.7.0", NVIDIA_HELM, "gpu-operator-26.7.0")
    NETWORK_OPERATOR = ChartPin("network-operator", "26.4.1", NVIDIA_HELM, "network-operator-26.4.1")
    CSI_DRIVER_NFS = ChartPin(
        "csi-driver-nfs",
        "4.13.4",
        "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
        "csi-driver-nfs-4.13.4",
    )
    # No classic Helm repository (rancher/local-path-provisioner#89); releases push the chart here.
    LOCAL_PATH_PROVISIONER = ChartPin(
        "local-path-provisioner",
        "0.0.37",
        "oci://ghcr.io/rancher/local-path-provisioner/charts",
        "local-path-provisioner-0.0.37",
    )

    @classmethod
    def all(cls) -> list[ChartPin]:
        return [value for value in vars(cls).values() if isinstance(value, ChartPin)]


class Manifests:
    APPWRAPPER = ManifestPin(
        "appwrapper",
        "v1.2.1",
        "https://github.com/project-codeflare/appwrapper/releases/download/v1.2.1/install.yaml",
    )

    @classmethod
    def all(cls) -> list[ManifestPin]:
        return [value for value in vars(cls).values() if isinstance(value, ManifestPin)]


KUBERNETES_VERSION = "1.33"
"""The Kubernetes minor version hpcforge targets unless a stack says otherwise (`hpcforge:kubernetes.version`'s default,
which also sets every namespace's Pod Security `enforce-version`); policies/admission/pss/ reproduces Pod Security
Admission at this version, and a test fails when this moves without it (tests/policies/admission/test_admission_pins.py)."""

SLINKY_TAG = "26.05-ubuntu26.04"

SLURMD_IMAGE_HAS_NVML = False
"""Whether the slurmd images at SLINKY_TAG can autodetect GPUs with NVML (`AutoDetect=nvml`): no. SlinkyProject/containers
schedmd/slurm/26.05/<flavor>/Dockerfile builds Slurm's own debian/ packaging (`mk-build-deps` of debian/control, then
`debuild`) on plain ubuntu with nothing that provides nvml.h; Slurm 26.05.3's debian/control lists no NVML/CUDA package,
so configure (auxdir/x_ac_nvml.m4) leaves HAVE_NVML undefined and src/interfaces/gpu.c `_get_gpu_type` answers
AutoDetect=nvml with "We were configured to autodetect nvml functionality, but we weren't able to find that lib when
Slurm was configured." and falls back to gpu/generic: no GPU is detected, and slurmctld drains the node "gres/gpu count
reported lower than configured" (observed with the 25.11 images: SlinkyProject/containers#14, open). `AutoDetect=nvidia`
(gpu/nvidia, Slurm 24.11+) needs no NVML but does not detect MIG devices (Slurm doc/html/gres.shtml). Check again
when SLINKY_TAG changes."""


class Images:
    MULTUS = ImagePin("ghcr.io/k8snetworkplumbingwg/multus-cni", "v4.3.0-thick")
    COREDNS = ImagePin("registry.k8s.io/coredns/coredns", "v1.12.1")
    DIRSRV = ImagePin("docker.io/389ds/dirsrv", "3.1")
    GRENDEL = ImagePin("ghcr.io/squarefactory/grendel", "0.2.5")
    MARIADB = ImagePin("docker.io/library/mariadb", "11.8.8")
    SLURMCTLD = ImagePin("ghcr.io/slinkyproject/slurmctld", SLINKY_TAG)
    SLURMD = ImagePin("ghcr.io/slinkyproject/slurmd", SLINKY_TAG)
    SLURMDBD = ImagePin("ghcr.io/slinkyproject/slurmdbd", SLINKY_TAG)
    SLURMRESTD = ImagePin("ghcr.io/slinkyproject/slurmrestd", SLINKY_TAG)
    LOGIN = ImagePin("ghcr.io/slinkyproject/login", SLINKY_TAG)
    # The Pyxis/enroot variants of the same release (SlinkyProject/containers schedmd/slurm/docker-bake.hcl targets
    # `slurmd_pyxis`/`login_pyxis`, built by schedmd/slurm/26.05/ubuntu26.04/Dockerfile.pyxis FROM slurmd and login
    # at SLINKY_TAG; tag = format_tag(registry, stage, "26.05", "ubuntu26.04")).
    SLURMD_PYXIS = ImagePin("ghcr.io/slinkyproject/slurmd-pyxis", SLINKY_TAG)
    LOGIN_PYXIS = ImagePin("ghcr.io/slinkyproject/login-pyxis", SLINKY_TAG)
    ALPINE = ImagePin("docker.io/library/alpine", "3.22.2")
    BUSYBOX = ImagePin("docker.io/library/busybox", "1.37.0")
    """local-path-provisioner's helper pod (the chart defaults to the unpinned `latest`)."""
    KUEUE = ImagePin("registry.k8s.io/kueue/kueue", "v0.19.2")
    REGISTRY = ImagePin("docker.io/library/registry", "3.0.0")
    # NVIDIA GPU Operator v26.7.0 and its operands (the chart's defaults, pinned here explicitly).
    GPU_OPERATOR = ImagePin("nvcr.io/nvidia/gpu-operator", "v26.7.0")
    GPU_DRIVER = ImagePin("nvcr.io/nvidia/driver", "595.91.07")
    CONTAINER_TOOLKIT = ImagePin("nvcr.io/nvidia/k8s/container-toolkit", "v1.20.0")
    DEVICE_PLUGIN = ImagePin("nvcr.io/nvidia/k8s-device-plugin", "v0.20.0")
    DCGM = ImagePin("nvcr.io/nvidia/cloud-native/dcgm", "4.6.0-1-ubuntu24.04")
    DCGM_EXPORTER = ImagePin("nvcr.io/nvidia/k8s/dcgm-exporter", "4.6.0-4.8.3-distroless")
    MIG_MANAGER = ImagePin("nvcr.io/nvidia/cloud-native/k8s-mig-manager", "v0.15.0")
    DRIVER_MANAGER = ImagePin("nvcr.io/nvidia/cloud-native/k8s-driver-manager", "v0.12.0")
    # nccl-tests (all_reduce_perf_mpi) as shipped in NVIDIA's PyTorch container, for the NCCL evidence check. NVIDIA
    # documents the binaries in these containers: CloudAI's NCCL workload (docs.nvidia.com/networking/cloudai,
    # releases 1.5-1.8) runs `all_reduce_perf_mpi` from nvcr.io/nvidia/pytorch:25.06-py3, and the Run:ai NCCL tutorial
    # (run-ai-docs.nvidia.com, tutorials/training-tutorials/nccl-tests) says pytorch:26.01-py3 ships them pre-built in
    # /usr/local/bin. 25.08 lies between the two; not pulled here (no registry is reachable).
    NCCL_TESTS = ImagePin("nvcr.io/nvidia/pytorch", "25.08-py3")
    # NVIDIA Network Operator 26.4.1 operands named in the NicClusterPolicy (the release's tag scheme).
    RDMA_SHARED_DEVICE_PLUGIN = ImagePin("nvcr.io/nvidia/mellanox/k8s-rdma-shared-dev-plugin", "network-operator-v26.4.1")
    CNI_PLUGINS = ImagePin("nvcr.io/nvidia/mellanox/plugins", "network-operator-v26.4.1")
    IPOIB_CNI = ImagePin("nvcr.io/nvidia/mellanox/ipoib-cni", "network-operator-v26.4.1")
    # nv-ipam, deployed by the NicClusterPolicy (network-operator v26.4.1 hack/release.yaml `nvIpam`).
    NV_IPAM = ImagePin("nvcr.io/nvidia/mellanox/nvidia-k8s-ipam", "network-operator-v26.4.1")

    @classmethod
    def all(cls) -> list[ImagePin]:
        return [value for value in vars(cls).values() if isinstance(value, ImagePin)]
