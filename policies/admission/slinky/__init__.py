"""Slinky slurm-operator 1.2.1's admission rules for its custom resources, as its validating webhook
and its CRDs' CEL rules decide them: what `pulumi up` would have refused (one refused custom resource
stops the update half-way).

Reproduced from SlinkyProject/slurm-operator at tag v1.2.1 (the chart pinned in
components/versions.py, `slurm-operator` 1.2.1), each rule citing its file and function:

- internal/webhook/{accounting,controller,loginset,nodeset,restapi,token}_webhook.go:
  `ValidateCreate` / `ValidateUpdate` and the shared `validate<Kind>` of each kind;
- api/v1beta1/{controller,accounting}_keys.go `ClusterName`, `AuthJwtRef`; token_keys.go `JwtRef`;
- the CEL rules of the CRDs (`+kubebuilder:validation:XValidation` markers in api/v1beta1/*_types.go,
  `x-kubernetes-validations` in ../shared/crds/slurm-operator-1.2.1), which the API server checks
  before it calls the webhook, and which the schema tier does not evaluate (offline/schema/crd.py).

What the webhook is told: the object as the API server has it, its CRD defaults applied (for an
UPDATE, also the stored old object). Go semantics kept where they decide: absent values are Go zero
values; `apiequality.Semantic.DeepEqual` (k8s.io/apimachinery v0.36.2 pkg/api/equality/semantic.go)
treats a nil and an empty slice or map alike and compares quantities by value; an IntOrString is an
int when the JSON is a number and a string when it is a string (`intstr.IntOrString.UnmarshalJSON`);
a `metav1.Duration` is a string that `time.ParseDuration` reads (gotime.py). Errors are joined as
`utilerrors.NewAggregate` joins them (one: its text; several: `[a, b]`, duplicates once), and the API
server reports `admission webhook "<name>" denied the request: <text>`.

Where it runs (helm/slurm-operator/templates/webhook/webhook.yaml at v1.2.1): with `webhook.enabled`
(default true), for CREATE and UPDATE of each kind, `failurePolicy: Fail` (`webhook.validating`), in
every namespace except kube-system, or only in `webhook.namespaces` when that is set. The one
mutating webhook of the chart is for `pods/binding` (internal/webhook/pod_binding_webhook.go: it copies
a node's topology annotation onto a worker pod); no webhook defaults or mutates the custom resources
hpcforge sends.

Not modelled: the webhook reads the Controller's `configFileRefs` ConfigMaps through its informer
cache (cmd/webhook/main.go `mgr.GetClient()`); here they are looked up among the objects given.

One module per job: scope.py (the webhook's kinds and where it runs), values.py (Go's view of the objects), webhook.py
(the rules per kind), crd.py (the CRDs' CEL rules) and verdicts.py (over a whole set of objects).
"""

from __future__ import annotations

from .crd import crd_rule_errors
from .family import FAMILY, SLINKY_WEBHOOK_ADMISSION, SlinkyAdmissionConfig, judge_slinky, scope_of
from .scope import (
    CHART,
    CHART_WEBHOOK_DEFAULTS,
    CREATE,
    REPRODUCES,
    SLINKY_GROUP,
    SLINKY_VERSION,
    UPDATE,
    WEBHOOK_NAMES,
    WebhookScope,
    webhook_scope,
)
from .values import (
    MINUTE_NS,
    QUANTITY_MAPS,
    SecretKeySelector,
    auth_jwt_ref,
    cluster_name,
    mask_trailing_dash,
    name_is_dns_subdomain,
    persistence_enabled,
    ref_name,
    secret_key_selector,
    semantic_equal,
)
from .verdicts import (
    Verdict,
    config_maps_of,
    create_verdicts,
    is_slinky,
    object_key,
    update_verdicts,
    validate_create,
    validate_update,
    verdict_line,
)
from .webhook import (
    CREATE_CHECKS,
    JWT_IMMUTABLE,
    KNOWN_CONFIG_FILES,
    NOT_KNOWN,
    RESERVED_CONFIG_FILES,
    Checked,
    ConfigMaps,
    validate_accounting,
    validate_controller,
    validate_create_errors,
    validate_loginset,
    validate_nodeset,
    validate_restapi,
    validate_token,
    validate_update_errors,
)

__all__ = [
    "CHART",
    "CHART_WEBHOOK_DEFAULTS",
    "CREATE",
    "CREATE_CHECKS",
    "FAMILY",
    "JWT_IMMUTABLE",
    "KNOWN_CONFIG_FILES",
    "MINUTE_NS",
    "NOT_KNOWN",
    "QUANTITY_MAPS",
    "REPRODUCES",
    "RESERVED_CONFIG_FILES",
    "SLINKY_GROUP",
    "SLINKY_VERSION",
    "SLINKY_WEBHOOK_ADMISSION",
    "UPDATE",
    "WEBHOOK_NAMES",
    "Checked",
    "ConfigMaps",
    "SecretKeySelector",
    "SlinkyAdmissionConfig",
    "Verdict",
    "WebhookScope",
    "auth_jwt_ref",
    "cluster_name",
    "config_maps_of",
    "crd_rule_errors",
    "create_verdicts",
    "is_slinky",
    "judge_slinky",
    "mask_trailing_dash",
    "name_is_dns_subdomain",
    "object_key",
    "persistence_enabled",
    "ref_name",
    "scope_of",
    "secret_key_selector",
    "semantic_equal",
    "update_verdicts",
    "validate_accounting",
    "validate_controller",
    "validate_create",
    "validate_create_errors",
    "validate_loginset",
    "validate_nodeset",
    "validate_restapi",
    "validate_token",
    "validate_update",
    "validate_update_errors",
    "verdict_line",
    "webhook_scope",
]
