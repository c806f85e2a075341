"""InterPodAffinityArgs: the weight of existing pods' required affinity terms in scoring."""

from __future__ import annotations

from kwhatif.api.strict_json import BOOL, INT32, TYPE_META, Struct, child
from kwhatif.api.validation import invalid
from kwhatif.plugins.args.base import PluginArgs

MIN_HARD_POD_AFFINITY_WEIGHT, MAX_HARD_POD_AFFINITY_WEIGHT = 0, 100


class InterPodAffinityArgs(PluginArgs):
    plugin = "InterPodAffinity"
    schema = Struct("InterPodAffinityArgs", "v1", {
        **TYPE_META, "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL})

    pointer_defaults = {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        weight = args["hardPodAffinityWeight"]
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            return [invalid(child(path, "hardPodAffinityWeight"), weight,
                            f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]")]
        return []
