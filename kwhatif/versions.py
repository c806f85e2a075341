"""The kube-scheduler releases kwhatif models, as data: per release its feature-gate defaults (as compiled),
its default plugin set and weights, and the behaviour changes it contains. One ``Features`` value (a
release plus ``--feature-gates`` overrides) travels with the scheduler setup; plugins and the engine ask
it ``enabled(gate)`` or ``has(change)``, the way upstream's plugins read their ``feature.Features``.

A behaviour change lives in the plugin upstream changed; here it is only named, with the release that
brought it and how kwhatif's model of it is verified (``CHANGES``). Adding a release (a preview of
v1.36, say) is adding a ``Release`` to ``RELEASES`` and its changes to ``CHANGES``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from kwhatif.errors import InputError

# How a modelled difference is verified, strongest first.
REFERENCE = "reference cases"  # against cases made by the real kube-scheduler of that release
UNIT_TESTS = "upstream unit-test tables"  # against upstream's own table tests, ported
UPSTREAM_CODE = "upstream code"  # read in the vendored tree and tested on hand-worked examples, not run against it
PREVIEW = "preview"  # only from upstream's text (release notes, PR description): not verified


@dataclass(frozen=True)
class Change:
    """A difference in what kube-scheduler decides or says, from the release ``since`` on."""

    id: str
    since: tuple[int, int, int]
    where: str  # the plugin or component upstream changed
    summary: str
    source: str  # upstream PR or file
    verified: tuple[str, ...]


@functools.cache  # a release's version is read at every plugin check of every framework made
def _v(text: str) -> tuple[int, int, int]:
    major, minor, patch = text.lstrip("v").split(".")
    return int(major), int(minor), int(patch)


UNTOLERATED_TAINTS_REASON = "UntoleratedTaintsReason"
DYNAMIC_RESOURCES_SCORE = "DynamicResourcesScore"
TOP_SCORE_HEAP = "TopScoreHeap"
BALANCED_ALLOCATION_CHANGE = "BalancedAllocationScoresChange"
IMAGE_LOCALITY_IMAGE_VOLUMES = "ImageLocalityImageVolumes"
IMAGE_LOCALITY_VOLUME_THRESHOLD = "ImageLocalityImageVolumeThreshold"
DRA_ALLOCATOR_ROLLBACK = "DRAAllocatorRollback"
DRA_INCUBATING_ALLOCATOR = "DRAIncubatingAllocator"
DRA_SCORE_READS_ALLOCATED_CLAIMS = "DynamicResourcesScoreReadsAllocatedClaims"
DRA_EXTENDED_RESOURCE = "DRAExtendedResource"
FIT_SIGNS_WITHOUT_DRA_RESOURCES = "NodeResourcesFitSignsWithoutDRAResources"
NODE_DECLARED_FEATURES = "NodeDeclaredFeaturesOn"
WORKLOAD_API_V1ALPHA2 = "WorkloadAPIv1alpha2PodGroupCycle"
WORKLOAD_API_V1BETA1 = "WorkloadAPIv1beta1"

CHANGES: dict[str, Change] = {c.id: c for c in (
    Change(UNTOLERATED_TAINTS_REASON, _v("1.34.2"), "TaintToleration",
           "Filter's reason is 'node(s) had untolerated taint(s)', without the taint's key and value, so a "
           "FitError counts nodes with different taints as one reason",
           "kubernetes#135023 (v1.34.2 patch)", (REFERENCE, UNIT_TESTS)),
    Change(DYNAMIC_RESOURCES_SCORE, _v("1.35.0"), "DynamicResources",
           "a Score plugin (weight 2 in the default profile): each allocated firstAvailable subrequest scores "
           "8 - its index, normalized to 0-100; every feasible node gets an entry",
           "v1.35 dynamicresources.go Score, default_plugins.go", (REFERENCE, UPSTREAM_CODE)),
    Change(TOP_SCORE_HEAP, _v("1.35.0"), "selectHost",
           "the pick among tied top scores is a heap ordered by total score and a random value only "
           "extender-scored nodes get, so without extenders it follows the feasible-node order",
           "v1.35 schedule_one.go sortedNodeScores (kubernetes#141024 calls it an omission)", (UPSTREAM_CODE,)),
    Change(BALANCED_ALLOCATION_CHANGE, _v("1.36.0"), "NodeResourcesBalancedAllocation",
           "scores the change the pod makes to the node's balance: 50 + (50 + score with the pod - score "
           "without it) / 2, each the old (1 - std) * 100, so no change scores 75 (every score of every pod "
           "differs)", "v1.36.2 balanced_allocation.go, balanced_allocation_test.go (kubernetes#135573)",
           (REFERENCE, UNIT_TESTS)),
    Change(IMAGE_LOCALITY_IMAGE_VOLUMES, _v("1.36.0"), "ImageLocality",
           "the images of the pod's image volumes count in the sum, not in the threshold (1000MB per "
           "container and init container)",
           "v1.36.2 image_locality.go sumImageScores, image_locality_test.go (kubernetes#130231)",
           (UNIT_TESTS, UPSTREAM_CODE)),
    Change(NODE_DECLARED_FEATURES, _v("1.36.0"), "NodeDeclaredFeatures",
           "the gate is on (beta), so the plugin is in the default profile: a pod that needs a node feature (a "
           "restart rule RestartAllContainers needs RestartAllContainersOnContainerExits) fits only nodes whose "
           "status.declaredFeatures lists it: 'node(s) didn't match Pod's required features', unresolvable",
           "v1.36.2 nodedeclaredfeatures.go, component-helpers nodedeclaredfeatures, default_plugins.go",
           (REFERENCE, UNIT_TESTS)),
    Change(DRA_INCUBATING_ALLOCATOR, _v("1.36.0"), "DynamicResources (structured allocator)",
           "with DRADeviceTaints, DRAPartitionableDevices, DRADeviceBindingConditions and DRAConsumableCapacity on, "
           "the incubating allocator: device taints against the requests' tolerations, counters shared by a "
           "pool's devices, per-device node selection, devices with binding conditions allocatable (their pools "
           "last), devices allowing multiple allocations with capacity requests and request policies; pools "
           "sorted by driver and name, slices by name; an invalid pool is skipped and, without a solution, "
           "rejects the node with 'invalid resource pools were encountered'; an allocated claim whose binding "
           "failed or timed out (10m) is not available on any node",
           "v1.36.2 structured/internal/incubating, dynamicresources.go Filter; allocator_testing.go",
           (REFERENCE, UNIT_TESTS)),
    Change(DRA_EXTENDED_RESOURCE, _v("1.36.0"), "NodeResourcesFit, DynamicResources",
           "DRAExtendedResource on: an extended resource a DeviceClass serves (extendedResourceName, or "
           "deviceclass.resource.kubernetes.io/<class>) is not checked by NodeResourcesFit on a node without "
           "allocatable of it; DynamicResources allocates it there through a claim for the pod's extended "
           "resources (one request per container, 'cannot fit resource' where neither serves it), which "
           "PreBind creates and later pods find allocated",
           "v1.36.2 noderesources/fit.go, dynamicresources/extendeddynamicresources.go, "
           "extendedresourcecache.go", (UNIT_TESTS, UPSTREAM_CODE)),
    Change(DRA_SCORE_READS_ALLOCATED_CLAIMS, _v("1.36.0"), "DynamicResources",
           "Score reads an allocated claim's own allocation and the node's results in turn for the others "
           "(v1.35 read the i-th claim against the i-th result: an allocated claim before an unallocated one "
           "was an error, 'number of allocations N is smaller than number of claims')",
           "v1.36.2 dynamicresources.go computeScore", (UPSTREAM_CODE,)),
    Change(FIT_SIGNS_WITHOUT_DRA_RESOURCES, _v("1.36.0"), "NodeResourcesFit",
           "OpportunisticBatching: with DRAExtendedResource on, the signature is refused only for a pod that "
           "requests an extended resource a DeviceClass serves (v1.35 refused every pod)",
           "v1.36.2 noderesources/fit.go SignPod", (UPSTREAM_CODE,)),
    Change(DRA_ALLOCATOR_ROLLBACK, _v("1.36.3"), "DynamicResources (structured allocator)",
           "a device the allocator rejects gives back what it reserved (shared counters, constraints, in-use "
           "marks, results), so partitionable devices no longer leak counters within one allocation attempt",
           "v1.36.3 k8s.io/dynamic-resource-allocation structured/internal/*/allocator.go", (UPSTREAM_CODE,)),
    Change(WORKLOAD_API_V1ALPHA2, _v("1.36.0"), "Workload API, GangScheduling",
           "scheduling.k8s.io/v1alpha2 replaces v1alpha1: a standalone PodGroup that pods join with "
           "spec.schedulingGroup (v1.35: spec.workloadRef into the Workload's spec.podGroups), scheduled in one pod "
           "group cycle (v1.35: pod by pod, each gang pod that fits waits at Permit until minCount are assumed, "
           "else is rejected after 5m0s)",
           "v1.35.4 gangscheduling.go, workloadmanager, schedule_one.go; v1.35.6 gangscheduling_test.go "
           "(openshift/microshift release-4.22); v1.36.2 schedule_one_podgroup.go", (UNIT_TESTS, UPSTREAM_CODE)),
    Change(WORKLOAD_API_V1BETA1, _v("1.37.0"), "Workload API",
           "scheduling.k8s.io/v1beta1 (v1alpha2 still taken): the v1alpha2 shape but disruptionMode a union, "
           "{single: {}} or {all: {}} (v1alpha2's Pod or PodGroup), and a PodGroup's spec.workloadRef "
           "{workloadName, templateName} (v1alpha2's podGroupTemplateRef.workload); WorkloadAwarePreemption folded "
           "into GenericWorkload; GangScheduling beta, still off",
           "versions-1.36.md's 1.37 notes; the v1.37 development tree's workload-aware preemption e2e test",
           (PREVIEW,)),
    Change(IMAGE_LOCALITY_VOLUME_THRESHOLD, _v("1.37.0"), "ImageLocality",
           "image volumes count in the threshold too: 1000MB per container, init container and image volume",
           "kubernetes#138951 (PR text)", (PREVIEW,)),
)}


@dataclass(frozen=True)
class Gate:
    default: bool
    locked: bool = False  # GA or deprecated and locked to its default: setting it otherwise is an error


# What kwhatif does with a gate given to --feature-gates: MODELLED gates change what kwhatif answers as
# upstream's code reads them; NO_EFFECT gates change nothing kwhatif answers (timing, status writes).
# Any other gate the release knows is refused as not modelled.
MODELLED_GATES = frozenset({"GangScheduling", "GenericWorkload", "NodeDeclaredFeatures", "OpportunisticBatching",
                            "StorageCapacityScoring", "TopologyAwareWorkloadScheduling", "WorkloadAwarePreemption"})
NO_EFFECT_GATES = frozenset({"SchedulerAsyncAPICalls", "NominatedNodeNameForExpectation",
                             "SchedulerPopFromBackoffQ", "SchedulerAsyncPreemption"})

# Gates of the API server, not of kube-scheduler: kwhatif's pod validation reads them.
API_SERVER_GATES = frozenset({"ContainerRestartRules", "RestartAllContainersOnContainerExits"})

# The v1.34.1 defaults of the gates kube-scheduler reads (pkg/features/kube_features.go as vendored), and
# of ContainerRestartRules, which kwhatif's pod validation reads as the API server does.
_GATES_1_34_1 = {
    "ContainerRestartRules": Gate(False),
    "DRAAdminAccess": Gate(True), "DRAConsumableCapacity": Gate(False), "DRADeviceBindingConditions": Gate(False),
    "DRADeviceTaints": Gate(False), "DRAExtendedResource": Gate(False), "DRAPartitionableDevices": Gate(False),
    "DRAPrioritizedList": Gate(True), "DRAResourceClaimDeviceStatus": Gate(True),
    "DRASchedulerFilterTimeout": Gate(True), "DynamicResourceAllocation": Gate(True),
    "InPlacePodVerticalScaling": Gate(True), "MatchLabelKeysInPodTopologySpread": Gate(True),
    "NominatedNodeNameForExpectation": Gate(False), "PodLevelResources": Gate(True),
    "SchedulerAsyncAPICalls": Gate(True), "SchedulerAsyncPreemption": Gate(True),
    "SchedulerPopFromBackoffQ": Gate(True), "StorageCapacityScoring": Gate(False),
    "VolumeAttributesClass": Gate(True),
}
# v1.34.2 turned SchedulerAsyncAPICalls off again (kubernetes#134401).
_GATES_1_34_7 = {**_GATES_1_34_1, "SchedulerAsyncAPICalls": Gate(False)}
# As compiled into v1.35.7 (../shared/conformance/v1.35/README.md).
_GATES_1_35_7 = {
    **_GATES_1_34_7,
    "ContainerRestartRules": Gate(True), "RestartAllContainersOnContainerExits": Gate(False),
    "DRADeviceTaintRules": Gate(False), "DynamicResourceAllocation": Gate(True, locked=True),
    "GangScheduling": Gate(False), "GenericWorkload": Gate(False),
    "InPlacePodLevelResourcesVerticalScaling": Gate(False), "InPlacePodVerticalScaling": Gate(True, locked=True),
    "NodeDeclaredFeatures": Gate(False), "NominatedNodeNameForExpectation": Gate(True),
    "OpportunisticBatching": Gate(True), "TaintTolerationComparisonOperators": Gate(False),
    "VolumeLimitScaling": Gate(False),
}
# As compiled into v1.36.2 (../shared/conformance/v1.36/README.md; pkg/features/kube_features.go of the
# vendored v1.36.2 tree), with the API server's ContainerRestartRules and RestartAllContainersOnContainerExits
# that pod validation reads. The locked GA gates the 1.36 scheduler still reads are listed so that setting
# them otherwise is refused as kube-scheduler refuses it.
_GATES_1_36_2 = {
    **_GATES_1_35_7,
    "DRAAdminAccess": Gate(True, locked=True), "DRAConsumableCapacity": Gate(True),
    "DRADeviceBindingConditions": Gate(True), "DRADeviceTaints": Gate(True), "DRAExtendedResource": Gate(True),
    "DRAListTypeAttributes": Gate(False), "DRANodeAllocatableResources": Gate(False),
    "DRAPartitionableDevices": Gate(True), "DRAResourcePoolStatus": Gate(False),
    "DRAWorkloadResourceClaims": Gate(False), "ImageVolume": Gate(True, locked=True),
    "InPlacePodLevelResourcesVerticalScaling": Gate(True), "MatchLabelKeysInPodAffinity": Gate(True, locked=True),
    "NodeDeclaredFeatures": Gate(True), "NodeInclusionPolicyInPodTopologySpread": Gate(True, locked=True),
    "PodSchedulingReadiness": Gate(True, locked=True), "RestartAllContainersOnContainerExits": Gate(True),
    "SchedulerQueueingHints": Gate(True, locked=True), "SidecarContainers": Gate(True, locked=True),
    "TopologyAwareWorkloadScheduling": Gate(False), "VolumeAttributesClass": Gate(True, locked=True),
    "WorkloadAwarePreemption": Gate(False),
}
# v1.37 as staging/src/k8s.io/kube-scheduler/pkg/features/kube_features.go of the v1.37 development tree
# declares it (v1.37's may still change). DRAFractionalCapacityRange is on only from a minimum
# compatibility version of 1.37, which a v1.37 binary does not default to.
_GATES_1_37_0 = {
    **_GATES_1_36_2,
    "CompositePodGroup": Gate(False), "DRADerivedAttributes": Gate(False), "DRADeviceCompatibilityGroups": Gate(False),
    "DRADeviceTaintRules": Gate(True), "DRAExtendedResource": Gate(True, locked=True),
    "DRAFractionalCapacityRange": Gate(False), "DRAOptionalNodeOperations": Gate(False),
    "DRAPrioritizedList": Gate(True, locked=True), "DRAResourceClaimDeviceStatus": Gate(True, locked=True),
    "InPlacePodVerticalScalingSchedulerPreemption": Gate(False), "InterPodAffinityHostnameFastPath": Gate(False),
    "NodeDeclaredFeatures": Gate(True, locked=True), "PodGroupPreemptionPolicy": Gate(False),
    "SchedulerPreQueueingHints": Gate(False), "StorageCapacityScoring": Gate(True), "VolumeLimitScaling": Gate(True),
}
# Gates 1.37 folds into others (the e2e tests of workload-aware preemption need only GenericWorkload).
_FOLDED_1_37_0 = {"WorkloadAwarePreemption": "GenericWorkload"}
_GATES_1_37_0 = {name: gate for name, gate in _GATES_1_37_0.items() if name not in _FOLDED_1_37_0}

# getDefaultPlugins' MultiPoint set (apis/config/v1/default_plugins.go) before applyFeatureGates; the
# weight None is no weight.
_DEFAULT_PLUGINS = (
    ("SchedulingGates", None), ("PrioritySort", None), ("NodeUnschedulable", None), ("NodeName", None),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", None), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None), ("NodeVolumeLimits", None), ("VolumeBinding", None), ("VolumeZone", None),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", None),
)


def apply_feature_gates(enabled, dra_scores: bool) -> tuple[tuple[str, int | None], ...]:
    """applyFeatureGates on the default set, for gates read through ``enabled``: NodeDeclaredFeatures
    appended, DynamicResources before DefaultPreemption (weight 2 once it scores, v1.35), GangScheduling
    appended, TopologyPlacementGenerator and PodGroupPodsCount (weight 1) appended. Gates a release does
    not have are off, so one function serves every release."""
    plugins = list(_DEFAULT_PLUGINS)
    if enabled("NodeDeclaredFeatures"):
        plugins.append(("NodeDeclaredFeatures", None))
    if enabled("DynamicResourceAllocation"):
        at = [name for name, _ in plugins].index("DefaultPreemption")
        plugins.insert(at, ("DynamicResources", 2 if dra_scores else None))
    if enabled("GangScheduling"):
        plugins.append(("GangScheduling", None))
    if enabled("TopologyAwareWorkloadScheduling"):
        plugins += [("TopologyPlacementGenerator", None), ("PodGroupPodsCount", 1)]
    return tuple(plugins)


# What v1.35 has that kwhatif does not model exactly.
_NOT_MODELLED_1_35 = (
    "the Workload API (GenericWorkload): a gang pod that waits at Permit after another is rejected when the "
    "gang's 5m0s deadline passes, so upstream's message says a little less than 5m0s for it",
)
# What v1.36 changes that kwhatif does not model yet (it answers as the code before the change would).
_NOT_MODELLED_1_36 = (
    "DRAExtendedResource (beta, on): a scoring strategy (NodeResourcesFit, BalancedAllocation) naming an "
    "extended resource a DeviceClass serves scores it from the pod's request alone, not from the node's "
    "devices of the class (the default strategies name cpu and memory only)",
    "DRA binding conditions at PreBind: kube-scheduler binds a pod whose devices have binding conditions only "
    "once they are met (up to 10m); kwhatif answers where the pod is placed, as if they will be",
    "the DRA filter timeout as a hard error, in-place pod-level resize (beta, on) and the configuration "
    "API's placementGenerate/placementScore points",
)
_NOT_MODELLED_1_37 = (
    "VolumeLimitScaling (beta, on): NodeVolumeLimits' missing-driver check with "
    "CSIDriver.spec.preventPodSchedulingIfMissing is not modelled",
    "a nominated pod reserving space behind a gate (kubernetes#139057) and resize request aggregation "
    "max(spec, actuated, allocated)",
    "the Workload API's v1beta1 beyond the v1alpha2 shape: CompositePodGroup (alpha) and a PodGroup's "
    "parentCompositePodGroupName, preemptionPolicy (PodGroupPreemptionPolicy), a minCount changed after creation, "
    "the queue holding the PodGroup rather than its pods (the cycle's outcome is the same), Job .spec.scheduling",
)


@dataclass(frozen=True)
class Release:
    """One modelled kube-scheduler release: the patches of its minor it answers for (``first_patch`` up
    to the next modelled release of the minor), its gates and default plugins, and how it is verified."""

    name: str  # "v1.35.7"
    first_patch: int
    gates: Mapping[str, Gate]
    verified: str  # REFERENCE, UNIT_TESTS, UPSTREAM_CODE or PREVIEW: how this release as a whole is checked
    source: str  # the upstream tree or text it was read from
    # What the release changes that kwhatif does not model (it answers as the release before would).
    not_modelled: tuple[str, ...] = ()
    checked: str = ""  # the reference cases made by this release that kwhatif passes, when there are any
    # Gates the release no longer has because it folded them into another (read as that one).
    folded: Mapping[str, str] = field(default_factory=dict)

    @property
    def version(self) -> tuple[int, int, int]:
        return _v(self.name)

    @property
    def minor(self) -> str:
        return f"v{self.version[0]}.{self.version[1]}"

    @property
    def preview(self) -> bool:
        return self.verified == PREVIEW

    @property
    def default_plugins(self) -> tuple[tuple[str, int | None], ...]:
        """The default profile's MultiPoint plugins and weights with the release's gate defaults."""
        return apply_feature_gates(lambda gate: gate in self.gates and self.gates[gate].default,
                                self.has(DYNAMIC_RESOURCES_SCORE))

    @property
    def changes(self) -> list[Change]:
        """The modelled changes since v1.34.1 this release contains, oldest first."""
        return sorted((c for c in CHANGES.values() if c.since <= self.version), key=lambda c: c.since)

    def has(self, change: str) -> bool:
        return CHANGES[change].since <= self.version


RELEASES: tuple[Release, ...] = (
    Release("v1.34.1", 0, MappingProxyType(_GATES_1_34_1), REFERENCE,
            "kubernetes-sigs/cluster-capacity vendor tree (k8s.io/kubernetes v1.34.1)",
            checked="351 single-pod cases and 76 sequences of conformance/"),
    Release("v1.34.7", 2, MappingProxyType(_GATES_1_34_7), UNIT_TESTS,
            "openshift-kni/scheduler-plugins release-4.22 vendor tree (v1.34.7); CHANGELOG-1.34"),
    Release("v1.35.7", 0, MappingProxyType(_GATES_1_35_7), REFERENCE,
            "openshift-kni/scheduler-plugins vendor tree (v1.35.4, cases made by v1.35.7)",
            _NOT_MODELLED_1_35, checked="115 single-pod cases and 24 sequences of conformance/v1.35/"),
    Release("v1.36.2", 0, MappingProxyType(_GATES_1_36_2), REFERENCE,
            "openshift/kubernetes-autoscaler vendor tree (k8s.io/kubernetes v1.36.2, cases made by it); tests "
            "from openshift/microshift's v1.36.2 source copy", _NOT_MODELLED_1_36,
            "159 single-pod cases and 24 sequences of conformance/v1.36/"),
    Release("v1.36.3", 3, MappingProxyType(_GATES_1_36_2), UPSTREAM_CODE,
            "openshift/microshift release-5.0 source copy (v1.36.3): v1.36.2 and the DRA allocator's rollback",
            _NOT_MODELLED_1_36),
    Release("v1.37.0", 0, MappingProxyType(_GATES_1_37_0), PREVIEW,
            "no vendored tree: v1.36.2 and on it PR texts, the kube-scheduler feature-gate file of the v1.37 "
            "development tree, CHANGELOG-1.37 to alpha.1; VolumeBinding's StorageCapacityScoring path as in v1.35",
            _NOT_MODELLED_1_36 + _NOT_MODELLED_1_37, folded=MappingProxyType(_FOLDED_1_37_0)),
)
BASELINE = RELEASES[0]  # the library's default (SchedulerSetup()): the release kwhatif was first verified on
NEWEST_VERIFIED = max((r for r in RELEASES if not r.preview), key=lambda r: r.version)

VERSION_PATTERN = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


def modelled_names() -> str:
    return ", ".join(r.name for r in RELEASES)


def find_release(text: str, what: str = "--kubernetes-version") -> tuple[Release, str]:
    """The release that answers for a version: ``1.35`` (a minor: its newest modelled patch), ``v1.34.1``,
    or a cluster's ``v1.34.5-eks-1234``. Returns it and a note when it stands in for another patch ('' when
    exact). A version kwhatif does not model is an InputError naming the modelled ones."""
    match = VERSION_PATTERN.match(text.strip())
    if not match:
        raise InputError(f"{what} {text!r}: not a Kubernetes version (like 1.35 or v1.34.1); "
                         f"modelled: {modelled_names()}")
    major, minor = int(match[1]), int(match[2])
    same_minor = sorted((r for r in RELEASES if r.version[:2] == (major, minor)), key=lambda r: r.version)
    if not same_minor:
        raise InputError(f"{what} {text}: kube-scheduler v{major}.{minor} is not modelled; "
                         f"modelled: {modelled_names()}")
    if match[3] is None:
        return same_minor[-1], ""
    patch = int(match[3])
    covering = [r for r in same_minor if r.first_patch <= patch]
    if not covering:
        raise InputError(f"{what} {text}: kube-scheduler v{major}.{minor}.{patch} is not modelled; "
                         f"modelled: {modelled_names()}")
    release = covering[-1]
    if release.version[2] == patch:
        return release, ""
    if patch > release.version[2]:
        return release, f"v{major}.{minor}.{patch} answered as {release.name}, the newest modelled v{major}.{minor} patch"
    return release, (f"v{major}.{minor}.{patch} answered as {release.name}, which stands for "
                     f"v{major}.{minor}.{release.first_patch} to {release.name}")


def parse_feature_gates(text: str | None, release: Release) -> dict[str, bool]:
    """``--feature-gates Name=bool,...`` as kube-scheduler takes it, for the gates kwhatif models."""
    overrides: dict[str, bool] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or value.strip().lower() not in ("true", "false"):
            raise InputError(f"--feature-gates {item!r}: expected Name=true or Name=false")
        enabled = value.strip().lower() == "true"
        gate = release.gates.get(name)
        if gate is None:
            raise InputError(f"--feature-gates: unrecognized feature gate {name!r} for kube-scheduler "
                             f"{release.name}; kwhatif models {', '.join(sorted(MODELLED_GATES | NO_EFFECT_GATES))}")
        if gate.locked and enabled != gate.default:
            raise InputError(f"--feature-gates: cannot set feature gate {name} to {str(enabled).lower()}, "
                             f"feature is locked to {str(gate.default).lower()} in {release.name}")
        if name not in MODELLED_GATES | NO_EFFECT_GATES:
            raise InputError(f"--feature-gates: {name} is not modelled by kwhatif (it answers with the "
                             f"default, {str(gate.default).lower()}); modelled: "
                             f"{', '.join(sorted(MODELLED_GATES | NO_EFFECT_GATES))}")
        overrides[name] = enabled
    return overrides


@dataclass(frozen=True)
class Features:
    """The release that answers and its gates (defaults, then ``overrides``): what plugins and the engine
    ask. ``note`` says how the release was chosen when it matters (a guess, a stand-in patch)."""

    release: Release = BASELINE
    overrides: Mapping[str, bool] = field(default_factory=dict)
    note: str = ""

    @property
    def name(self) -> str:
        return self.release.name

    def enabled(self, gate: str) -> bool:
        """Whether the gate is on; a gate the release does not know is off, as upstream's gates are."""
        if gate in self.overrides:
            return self.overrides[gate]
        known = self.release.gates.get(gate)
        if known is None and gate in self.release.folded:
            return self.enabled(self.release.folded[gate])
        return known is not None and known.default

    def has(self, change: str) -> bool:
        return self.release.has(change)

    def default_plugins(self) -> tuple[tuple[str, int | None], ...]:
        """The default profile's MultiPoint plugins as the release's applyFeatureGates makes them with these gates."""
        return apply_feature_gates(self.enabled, self.has(DYNAMIC_RESOURCES_SCORE))

    def with_note(self, note: str) -> "Features":
        return replace(self, note=note)

    def to_dict(self) -> dict:
        data: dict = {"kubernetesVersion": self.name}
        if self.release.preview:
            data["preview"] = True
        if self.overrides:
            data["featureGates"] = dict(sorted(self.overrides.items()))
        if self.note:
            data["kubernetesVersionNote"] = self.note
        return data



def describe(data: Mapping) -> str:
    """The header line's words for ``Features.to_dict()`` (or a document holding it): 'kube-scheduler
    v1.35.7', with preview, the gates set and how the release was chosen."""
    text = f"kube-scheduler {data['kubernetesVersion']}"
    if data.get("preview"):
        text += " (preview: modelled from upstream's text, not verified)"
    gates = data.get("featureGates") or {}
    if gates:
        text += " with " + ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())
    note = data.get("kubernetesVersionNote")
    return text + (f" ({note})" if note else "")


def features_for(version: str, gates: str | None = None, what: str = "--kubernetes-version") -> Features:
    release, note = find_release(version, what)
    return Features(release, MappingProxyType(parse_feature_gates(gates, release)), note)


DEFAULT = Features()


def _answers_for(release: Release) -> str:
    """The patches a release answers for: up to the next modelled release of its minor, else every later one."""
    later = sorted(r.first_patch for r in RELEASES
                   if r.version[:2] == release.version[:2] and r.version[2] > release.version[2])
    first = f"{release.minor}.{release.first_patch}"
    if later:
        last = f"{release.minor}.{later[0] - 1}"
        return f"{first} to {last}" if last != first else first
    return f"{first} and later {release.minor} patches"


def modelled_table() -> list[dict]:
    """What ``kwhatif versions`` prints: per release the patches it answers for, how it is verified, what it
    changes against the release before it (behaviour, gate defaults, default plugin weights) with how each
    change is verified, and what it changes that kwhatif does not model. Plain data."""
    rows = []
    previous: Release | None = None
    for release in sorted(RELEASES, key=lambda r: r.version):
        since = previous.version if previous else (0, 0, 0)
        changes = [{"where": c.where, "change": c.summary, "source": c.source, "verified": list(c.verified)}
                   for c in release.changes if since < c.since]
        gates = []
        if previous is not None:
            for name in sorted(set(release.gates) | set(previous.gates)):
                old, new = previous.gates.get(name), release.gates.get(name)
                if old is None or new is None or (old.default, old.locked) != (new.default, new.locked):
                    gates.append({"gate": name, "from": _gate_text(old), "to": _gate_text(new)})
        weights = []
        if previous is not None:
            before = dict(previous.default_plugins)
            for name, weight in release.default_plugins:
                if name not in before or before[name] != weight:
                    weights.append({"plugin": name, "added": name not in before, "from": before.get(name),
                                    "to": weight})
        rows.append({"release": release.name, "answersFor": _answers_for(release), "verified": release.verified,
                     "checked": release.checked, "preview": release.preview, "source": release.source,
                     "since": previous.name if previous else None, "changes": changes,
                     "featureGates": gates, "defaultPluginWeights": weights,
                     "notModelled": list(release.not_modelled),
                     "notModelledSince": [item for item in release.not_modelled
                                          if previous is None or item not in previous.not_modelled]})
        previous = release
    return rows


def _gate_text(gate: Gate | None) -> str:
    if gate is None:
        return "absent"
    return ("on" if gate.default else "off") + (" (locked)" if gate.locked else "")

