"""DefaultPreemptionArgs: how many candidate nodes a preemption attempt looks for."""

from __future__ import annotations

from kwhatif.api.strict_json import INT32, TYPE_META, Struct, child
from kwhatif.api.validation import invalid
from kwhatif.plugins.args.base import PluginArgs


class DefaultPreemptionArgs(PluginArgs):
    plugin = "DefaultPreemption"
    schema = Struct("DefaultPreemptionArgs", "v1", {
        **TYPE_META, "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32})

    pointer_defaults = {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}

    @classmethod
    def errors(cls, args: dict, path: str = "") -> list:
        errs = []
        pct, absolute = args["minCandidateNodesPercentage"], args["minCandidateNodesAbsolute"]
        pct_path, abs_path = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
        if pct < 0 or pct > 100:
            errs.append(invalid(pct_path, pct, "not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(invalid(abs_path, absolute, "not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
        return errs
