"""MetalLB's validating webhooks, as MetalLB v0.16.1 decides them, for IPAddressPools, L2Advertisements,
BGPAdvertisements, BGPPeers and Communities.

The controller serves one webhook per kind (chart charts/metallb/templates/webhooks.yaml: CREATE and
UPDATE, failurePolicy `crds.validationFailurePolicy`, `Fail` by default; names below). Each handler
(internal/k8s/webhooks/webhookv1beta1/*_webhook.go, webhookv1beta2/bgppeer_webhook.go) refuses an object
outside the controller's namespace ("resource must be created in <ns> namespace"), then lists the
objects of its kind that exist in that namespace, puts the new one among them (`*ListWithUpdate`) and
parses the whole set with the controller's own configuration parser (internal/config/validator.go
`validator.Validate` -> config.go `For`), refusing the object with the parser's first error:

- IPAddressPool: the pools; L2Advertisement: the L2 advertisements and the pools; BGPAdvertisement:
  the BGP advertisements, the pools and the nodes; BGPPeer: the peers and the nodes; Community: the
  communities. A BGPPeer with `disableMP` is admitted on CREATE with a warning and nothing else checked.
- Before parsing, `resetTransientErrorsFields` clears peers' bfdProfile and passwordSecret and keeps only
  the BGP advertisements' communities that contain ':' (validator.go).
- `For` first runs the BGP backend's check (validation.go `ValidationFor`: `native` -> `DiscardFRROnly`,
  `frr`/`frr-k8s` -> `DiscardNativeOnly`, the controller's METALLB_BGP_TYPE, `native` when unset), then
  `bfdProfilesFor`, `peersFor` (`peerFromCR`, `parseTimers`), `poolsFor` (`communitiesFromCrs`,
  `addressPoolFromCR`, `ParseCIDR`, `cidrsOverlap` across every pool, `setL2AdvertisementsToPools`,
  `setBGPAdvertisementsToPools`, `l2AdvertisementFromCR`, `bgpAdvertisementFromCR`,
  `validateBGPAdvPerPool`), `validateConfig`.

Not reproduced (hpcforge sets none of these): BFD profiles, pool service allocation
(serviceAllocation), label-selector duplicate checks, BGP community values (legacy/large syntax and
aliases), BGP advertisements' local-preference conflicts, connectTime, password secrets.
A pool referenced by an advertisement but absent is not an error in v0.16.1 (the name is skipped).

One module per job: addresses.py (names, the refusal, Go's address parsing), pools.py (pools and advertisements),
peers.py (BGP peers, native and FRR), parser.py (the configuration parser over a cluster's resources) and objects.py
(the webhooks over hpcforge's objects, the controller's BGP implementation).
"""

from __future__ import annotations

from ..family import Pin
from .addresses import (
    BGP_TYPES,
    GROUP,
    NAMESPACE,
    VERSIONS,
    WEBHOOKS,
    Network,
    RefusedError,
    cidrs_overlap,
    go_cidr,
    go_ip,
    parse_cidr,
)
from .objects import CHART_DEFAULTS, bgp_type_from_values, controller_bgp_type, judged, refusal
from .parser import ClusterResources, validate
from .peers import discard_frr_only, discard_native_only, parse_timers, peer_from_cr, peer_identifier, peers_share_node
from .pools import (
    Pool,
    address_pool_from_cr,
    bgp_advertisement_from_cr,
    go_uint,
    l2_advertisement_from_cr,
    pools_for,
    selected_pools,
    validate_bgp_adv_per_pool,
)

REPRODUCES = Pin("metallb", "v0.16.1", ("Charts.METALLB",), "metallb/metallb v0.16.1")
"""The release reproduced here (pins.py: a test fails when components/versions.py moves it alone)."""

__all__ = [
    "BGP_TYPES",
    "CHART_DEFAULTS",
    "GROUP",
    "NAMESPACE",
    "REPRODUCES",
    "VERSIONS",
    "WEBHOOKS",
    "ClusterResources",
    "Network",
    "Pool",
    "RefusedError",
    "address_pool_from_cr",
    "bgp_advertisement_from_cr",
    "bgp_type_from_values",
    "cidrs_overlap",
    "controller_bgp_type",
    "discard_frr_only",
    "discard_native_only",
    "go_cidr",
    "go_ip",
    "go_uint",
    "judged",
    "l2_advertisement_from_cr",
    "parse_cidr",
    "parse_timers",
    "peer_from_cr",
    "peer_identifier",
    "peers_share_node",
    "pools_for",
    "refusal",
    "selected_pools",
    "validate",
    "validate_bgp_adv_per_pool",
]
