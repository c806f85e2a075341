"""Accelerators: what the memo evaluation (kwhatif.evaluation.memo) may know of a plugin beyond upstream's
plugin API, one per plugin that has any, registered by plugin name (as framework.batch's SIGNERS are):
what the plugin's verdicts read (so that they may be kept) and bulk forms of its Filter and Score. The
plugins themselves keep upstream's API; Fresh reads none of this."""

from __future__ import annotations

from kwhatif.accelerators import dynamic_resources, inter_pod_affinity, node_declarations, pod_topology_spread
from kwhatif.accelerators import image_locality, resources, volume_binding
from kwhatif.accelerators.accelerator import NONE, Accelerator
from kwhatif.framework.cycle_state import CycleState

ACCELERATORS: dict[str, Accelerator] = {
    **node_declarations.ACCELERATORS,
    **resources.ACCELERATORS,
    "ImageLocality": image_locality.ACCELERATOR,
    "InterPodAffinity": inter_pod_affinity.ACCELERATOR,
    "PodTopologySpread": pod_topology_spread.ACCELERATOR,
    "DynamicResources": dynamic_resources.ACCELERATOR,
    "VolumeBinding": volume_binding.ACCELERATOR,
}

__all__ = ["ACCELERATORS", "Accelerator", "accelerator_of", "node_only_filters"]


def accelerator_of(plugin) -> Accelerator:
    """The plugin's accelerator (one that declares nothing for a plugin without one)."""
    return ACCELERATORS.get(plugin.name, NONE)


def node_only_filters(framework, state: CycleState) -> int:
    """How many leading Filter plugins either do not run in this cycle or read only the pod and the node
    (``Accelerator.reads_node_only``) with no PreFilter extension that pods coming and going would change
    their state through: their verdict on a node outlasts pods placed on it or taken from it."""
    skip = state.skip_filter_plugins
    count = 0
    for pl in framework.points["filter"]:
        if not (pl.name in skip or (accelerator_of(pl).reads_node_only and not hasattr(pl, "add_pod")
                                    and not hasattr(pl, "remove_pod"))):
            break
        count += 1
    return count
