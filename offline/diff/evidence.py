"""The upstream code or document behind each impact rule (offline/diff/slurm_rules.py, site_rules.py): one
constant per claim, quoted in the report next to the effect it explains."""

from __future__ import annotations

EVIDENCE_NODESET_ROLL = (
    "slurm-operator v1.2.1 internal/controller/nodeset/nodeset_history.go getPatch (a revision covers spec.template, "
    "slurmd, extraConf, logfile, ssh, ordinalPadding, oversubscribeNode) and nodeset_sync.go splitUpdatePods "
    "(maxUnavailable of replicas, rounded up, at least 1); docs/concepts/nodeset-controller.md 'A pod is never "
    "deleted until its Slurm node is fully drained'"
)


EVIDENCE_NODESET_SCALE_IN = "slurm-operator v1.2.1 docs/concepts/nodeset-controller.md, Scale-in Lifecycle: drains each selected pod's Slurm node before deleting it"


EVIDENCE_NODESET_NAMES = "slurm-operator v1.2.1 internal/controller/nodeset/utils/utils.go GetOrdinalPodName ('<nodeset>-<ordinal>') and GetSlurmNodeName (the pod's hostname)"


EVIDENCE_NODESET_DELETE = (
    "slurm-operator v1.2.1 internal/controller/nodeset/nodeset_sync.go Sync ('NodeSet is being deleted, skipping sync': no drain); "
    "Kubernetes garbage collection (https://kubernetes.io/docs/concepts/architecture/garbage-collection/, cascading deletion): "
    "the NodeSet's pods go with it, without the operator's drain"
)


EVIDENCE_GRENDEL_BOOT = "Grendel serves hosts.json/images.json at PXE boot (https://grendel.readthedocs.io, Provisioning): a running host keeps its image until it reboots"


EVIDENCE_CONTROLLER_POD = "slurm-operator v1.2.1 internal/builder/controllerbuilder/controller_app.go (one slurmctld StatefulSet pod built from the Controller spec): a changed pod spec restarts it"


EVIDENCE_CLUSTER_NAME = (
    "slurm-26.05.3 src/slurmctld/controller.c _verify_clustername: 'CLUSTER NAME MISMATCH ... Remove %s to override' "
    "(fatal: slurmctld does not start on state saved under another ClusterName)"
)


EVIDENCE_SLURMDBD = "https://slurm.schedmd.com/accounting.html (slurmctld keeps job records for slurmdbd while it is down); slurm-operator v1.2.1 builds one slurmdbd pod from the Accounting spec"


EVIDENCE_SACCT = "scripts/slurm/sacct_sync.py make_plan (hpcforge's reconcile: `prune` deletes users, associations, accounts and QOS absent from config)"


EVIDENCE_LDAP = "scripts/directory/ldap_sync.py prune (entries under the OUs hpcforge owns that the LDIF lacks are deleted)"


EVIDENCE_METALLB = "MetalLB https://metallb.io/usage/ ('metallb.io/loadBalancerIPs' requests that address); bare-metal slurmd reach slurmctld at its address (docs/layers/provisioning.md join script, configless --conf-server)"


EVIDENCE_CA = "cert-manager https://cert-manager.io/docs/configuration/ca/ (certificates already issued are not re-issued when the CA changes; they keep the old issuer until renewed)"


EVIDENCE_CERT = (
    "cert-manager https://cert-manager.io/docs/usage/certificate/ (a changed Certificate spec is re-issued into its Secret)"
)


EVIDENCE_RANDOM = "pulumi-random: a replaced RandomPassword/RandomBytes has a new value (terraform-provider-random docs: changes force a new value); the old one is not kept"


EVIDENCE_SLURM_KEY = (
    "https://slurm.schedmd.com/authentication.html (auth/slurm: every daemon must share slurm.key); slurm.conf(5) AuthType"
)


EVIDENCE_PVC = "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#reclaiming (a deleted claim's volume is deleted with reclaimPolicy Delete, the default of dynamic provisioning)"


EVIDENCE_PVC_SHRINK = (
    "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#expanding-persistent-volumes-claims (a claim can only grow)"
)


EVIDENCE_REFUSAL = "the admission reproductions in policies/rules/admission_*.py and the Pulumi engine (protect): `pulumi up` stops at this resource"


EVIDENCE_ARGOCD_PRUNE = "Argo CD v3.4.4 docs/user-guide/auto_sync.md (automated sync with prune: true deletes what the new revision no longer renders)"


EVIDENCE_ARGOCD_DELETE = "Argo CD v3.4.4 docs/user-guide/app_deletion.md (without the resources finalizer, deleting an Application leaves its resources; with it, they are deleted)"


EVIDENCE_KUEUE = "Kueue https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/ (quota changes apply to workloads not yet admitted; admitted ones keep running)"


EVIDENCE_JOB = (
    "pulumi-kubernetes diff.go (a Job's `.metadata.name` and `.spec.template` force a replacement): the successor Job runs again"
)


EVIDENCE_WORKLOAD = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment (a changed pod template rolls the pods)"


EVIDENCE_CONFIGMAP_REPLACE = "pulumi-kubernetes diff.go forceNewProperties (ConfigMap .data without enableConfigMapMutable) and provider.go Diff (deleteBeforeReplace for a named object)"


EVIDENCE_NAMESPACE = "https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/ (deleting a namespace deletes everything in it)"
