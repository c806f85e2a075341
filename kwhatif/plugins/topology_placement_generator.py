"""TopologyPlacementGenerator (v1.36, gate TopologyAwareWorkloadScheduling; framework/plugins/topologyaware):
the PlacementGenerate plugin that splits the nodes into one placement per domain of the PodGroup's
``schedulingConstraints.topology[0].key`` (nodes without the label are in none), so the pod group cycle
tries the whole group inside one rack, block or zone at a time. When pods of the group are already
scheduled, only their domain is generated; a group without a topology constraint gets the parent
placement (every node). Upstream builds the placements from a Go map, so their order is random; kwhatif
orders them by domain name."""

from __future__ import annotations

from typing import NamedTuple

from kwhatif.api.pod_groups import topology_keys
from kwhatif.framework.interface import Plugin, Status


class Placement(NamedTuple):
    """fwk.Placement: a named set of nodes a pod group is tried on (name "" for the parent, every node)."""

    name: str
    nodes: list


class TopologyPlacementGenerator(Plugin):

    def generate_placements(self, pod_group: dict, scheduled_nodes: list[str], parent: Placement
                            ) -> tuple[list[Placement] | None, Status | None]:
        """GeneratePlacements: ``scheduled_nodes`` are the nodes of the group's scheduled (bound or assumed) pods."""
        keys = topology_keys(pod_group)
        if not keys:
            return [parent], None
        key = keys[0]
        required = None
        for node_name in scheduled_nodes:
            ni = self.handle.snapshot.get(node_name)
            if ni is None:
                return None, Status.error(f"cannot determine domain for already scheduled pods: getting node for "
                                          f"pod: nodeinfo not found for node name {node_name!r}")
            domain = (ni.node.get("metadata", {}).get("labels") or {}).get(key)
            if domain is None:
                return None, Status.error("cannot determine domain for already scheduled pods: no topology domain "
                                          "found for pod")
            if required is not None and required != domain:
                return None, Status.error(f"cannot determine domain for already scheduled pods: more than 1 domain "
                                          f"found for pod group: {required}, {domain}")
            required = domain
        by_domain: dict[str, list] = {}
        for ni in parent.nodes:
            domain = (ni.node.get("metadata", {}).get("labels") or {}).get(key)
            if domain is not None and (required is None or domain == required):
                by_domain.setdefault(domain, []).append(ni)
        return [Placement(domain, nodes) for domain, nodes in sorted(by_domain.items())], None
