"""Whose pods preemption would evict: each victim's controlling workload (the blast radius of an
eviction), carried on the result as data for the renderers."""

from __future__ import annotations

from kwhatif.state.nodeinfo import PodInfo


class Owners:
    """A pod's controlling workload, seen through its ReplicaSet up to the Deployment when the dump
    has the ReplicaSet: the blast radius of an eviction."""

    def __init__(self, cluster) -> None:
        self._rs_owner: dict[tuple[str, str], dict] = {}
        for rs in getattr(cluster, "replica_sets", None) or []:
            meta = rs.get("metadata") or {}
            ref = _controller_ref(meta)
            if ref is not None:
                self._rs_owner[(meta.get("namespace") or "default", meta.get("name", ""))] = ref

    def of(self, pi: PodInfo) -> str:
        return self.of_pod(pi.pod)

    def of_pod(self, pod: dict) -> str:
        """``of`` for a pod as data (no PodInfo made for it: a sweep reads thousands)."""
        meta = pod.get("metadata") or {}
        ref = _controller_ref(meta)
        if ref is None:
            return ""
        kind, name = ref.get("kind", ""), ref.get("name", "")
        if kind == "ReplicaSet":
            parent = self._rs_owner.get((meta.get("namespace") or "default", name))
            if parent is not None:
                kind, name = parent.get("kind", ""), parent.get("name", "")
            elif (pod_hash := (meta.get("labels") or {}).get("pod-template-hash")) and name.endswith("-" + pod_hash):
                # The ReplicaSet is not in the dump; the Deployment controller names it <deployment>-<hash>.
                kind, name = "Deployment", name[: -len(pod_hash) - 1]
        return f"{kind}/{name}"


def _controller_ref(meta: dict) -> dict | None:
    refs = meta.get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


def victim_owners(outcome, cluster) -> dict[str, str]:
    """``{victim pod key: "Kind/name"}`` for every victim of every candidate ("" without an owner)."""
    owners = Owners(cluster)
    return {pi.key: owners.of(pi) for victims in outcome.candidates.values() for pi in victims.pods}
