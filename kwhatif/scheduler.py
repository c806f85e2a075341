"""One scheduling attempt for one pod, as kube-scheduler's schedulingCycle runs it
(schedule_one.go): PreEnqueue gates, PreFilter, Filter with nominated pods, extender filters,
PostFilter when nothing fits, then PreScore/Score/extender prioritize and host selection.

A single attempt (``walk`` None) evaluates and scores every node, even a single feasible node, and even
when the pod's nominated node passes the filters and kube-scheduler takes it without looking further
(evaluateNominatedNode): the result says which node SchedulePod returns. Which nodes kube-scheduler's
percentageOfNodesToScore sampling would examine, and its pick among them, is reported beside
(kwhatif.sampling). A cycle of a sequence (``walk`` given) is kube-scheduler's: the nodes are filtered
in node-tree order from the walk's start index until the sample is complete, only the sample is scored,
and the start index advances.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from itertools import compress, repeat
from operator import attrgetter, eq
from typing import Callable

from kwhatif.api.defaults import Admission
from kwhatif.evaluation import evaluation_for
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import (
    CLAIM_ALLOCATIONS_KEY,
    DRA_DETAILS_KEY,
    MAX_EXTENDER_PRIORITY,
    MAX_NODE_SCORE,
    NOTES_KEY,
    Code,
    PluginError,
    Status,
)
from kwhatif.framework.runtime import Framework, NodeScores
from kwhatif.framework.types import Diagnosis, FitError, NodeToStatus
from kwhatif.preemption import Evaluator, preemption_outcome, utc_now
from kwhatif.result import ScheduleResult
from kwhatif.framework.batch import GATE as BATCHING_GATE
from kwhatif.framework.batch import OpportunisticBatch, SortedScoredNodes
from kwhatif.sampling import NodeWalk, Sampling, node_tree_order, walk
from kwhatif.state.nodeinfo import NodeInfo, PodInfo
from kwhatif.versions import TOP_SCORE_HEAP

# A node cluster-autoscaler removes, for a pod that tolerates its taint (kwhatif's words: the pod passes
# kube-scheduler's filters there, but CA's simulation never puts it on a node it removes).
BEING_REMOVED = "node(s) were being removed by cluster-autoscaler"

EXTENDER_NAME = "Extender"  # kube-scheduler's pseudo plugin name for extenders
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
_name = attrgetter("name")


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes kube-scheduler looks for before it stops filtering."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = percentage or 0
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def heap_top(totals: list[int], names: list[str]) -> str:
    """The node v1.35's sortedNodeScores pops first: container/heap's Init over the scores in feasible order,
    Less = higher total (the Randomizer, set only for extender-scored nodes, is 0 here), then the root. Among
    tied totals that is not always the first of the list: sifting moves tied nodes past each other."""
    heap = list(zip(totals, names))
    n = len(heap)
    for start in range(n // 2 - 1, -1, -1):
        i = start
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and heap[child + 1][0] > heap[child][0]:
                child += 1
            if not heap[child][0] > heap[i][0]:
                break
            heap[i], heap[child] = heap[child], heap[i]
            i = child
    return heap[0][1]


class Scheduler:
    """Evaluates pods against one snapshot with one profile's framework and the configured extenders."""

    def __init__(self, framework: Framework, extenders: list | None = None, parallelism: int = 16,
                 clock: Callable[[], datetime] = utc_now, evaluation: str | None = None) -> None:
        """``evaluation``: the NodeEvaluation implementation (kwhatif.evaluation), the selected one when None."""
        self.framework = framework
        self.evaluation = evaluation_for(framework, evaluation)
        self.snapshot = framework.snapshot
        self.extenders = extenders or []
        self.parallelism = parallelism
        # v1.35's OpportunisticBatching (its feature gate): the profile's ranking, used by sequences' cycles.
        self.batch = OpportunisticBatch(framework, bool(self.extenders)) if framework.features.enabled(
            BATCHING_GATE) else None
        framework.handle.extenders = self.extenders  # framework.Handle.Extenders(), for preemption
        # Preemption reads the clock: a pod that has not started is as old as "now".
        framework.handle.preemption_evaluator = functools.partial(Evaluator, clock=clock)

    def schedule(self, pod: PodInfo, admission: Admission, walk: NodeWalk | None = None,
                 skip: frozenset[str] = frozenset(), removed: frozenset[str] = frozenset()) -> ScheduleResult:
        """One scheduling attempt; with ``walk``, kube-scheduler's sampled cycle from its start index. The
        nodes in ``skip`` are not candidates (a pod group's placement leaves them out). The nodes in
        ``removed`` stay in the node list (those cluster-autoscaler removes: tainted, so the message counts
        them as kube-scheduler's would) but never take the pod, whatever it tolerates (findPlaceFor leaves
        them out): one that passes the filters is rejected as being removed."""
        fw = self.framework
        nodes = self.snapshot.node_info_list
        if skip:
            nodes = [ni for ni in nodes if ni.name not in skip]
        result = ScheduleResult(pod=pod, admission=admission, profile=fw.profile.scheduler_name,
                                num_all_nodes=len(nodes), features=fw.features)
        result.nodes_scheduler_would_examine = num_feasible_nodes_to_find(
            fw.profile.percentage_of_nodes_to_score, len(nodes))
        self.evaluation.begin(pod)
        gate = fw.run_pre_enqueue(pod)
        if gate is not None:
            result.gated, result.gate_status = True, gate
            return result
        if walk is not None:  # the scheduling queue pops the pod: a new cycle
            walk.cycle += 1
        if not nodes:
            result.message = NO_NODES_AVAILABLE
            return result

        state = CycleState()
        try:
            return self.schedule_pod(state, pod, nodes, result, walk, removed)
        finally:
            result.dra = state.read(DRA_DETAILS_KEY) or {}
            result.claim_allocations = state.read(CLAIM_ALLOCATIONS_KEY) or {}
            result.warnings.extend(state.read(NOTES_KEY) or [])

    def schedule_pod(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], result: ScheduleResult,
                     walk: NodeWalk | None, removed: frozenset[str] = frozenset()) -> ScheduleResult:
        """schedulePod: find_nodes_that_fit_pod; PostFilter when none fits; else prioritize_nodes and
        select_host. A plugin's Error ends the attempt as it ends kube-scheduler's scheduling cycle: no
        PostFilter, the error is the message."""
        fw = self.framework
        diagnosis = Diagnosis()
        statuses = diagnosis.node_to_status
        fit = self.find_nodes_that_fit_pod(state, pod, nodes, diagnosis, result, walk, removed)
        if fit is None:
            return result
        feasible, candidates, rejected_nominated = fit
        result.feasible = list(map(_name, feasible))
        # A single attempt reports the first cycle's sample beside its answer (a walk has its own).
        sampled = (walk is None or result.nominated_node_fast_path) and len(nodes) >= MIN_FEASIBLE_NODES_TO_FIND

        if not feasible:
            if sampled:  # nothing fits: every candidate was examined (none after a PreFilter rejection)
                result.sampling = self._sample(None, pod, candidates, result, rejected_nominated)
            if fw.has_post_filter_plugins():
                post_result, post_status = fw.run_post_filter(state, pod, statuses)
                result.post_filter_status = post_status
                result.preemption = preemption_outcome(post_result, post_status)
                diagnosis.post_filter_msg = post_status.message
            result.fit_error = FitError(pod, len(nodes), diagnosis)
            result.message = result.fit_error.error()
            return result

        # A sample smaller than the feasible set (one worker only) is scored from the state as filtering
        # left it: PreScore writes into the state.
        sample_state = state.clone() if sampled and self.parallelism == 1 else None
        try:
            scores = self.prioritize_nodes(state, pod, feasible, result)
            result.scores = scores
            best = max(scores.totals)
            result.selected = sorted(compress(scores.nodes, map(eq, scores.totals, repeat(best))))
            if result.nominated_node_fast_path:
                result.selected = [pod.nominated_node_name]
            if sampled:
                result.sampling = self._sample(sample_state, pod, candidates, result, rejected_nominated)
            elif result.sampling is not None:  # the walk's sample: its top is what is bound
                result.sampling.selected = list(result.selected)
        except PluginError as exc:  # prioritizeNodes failed: the cycle ends with the error, nothing is bound
            result.scores, result.selected = {}, []
            result.error = result.message = exc.status.message
            return result
        result.schedule_pod_host = self.select_host(result, nodes, candidates, feasible, walk)
        return result

    def find_nodes_that_fit_pod(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], diagnosis: Diagnosis,
                                result: ScheduleResult, walk: NodeWalk | None, removed: frozenset[str]
                                ) -> tuple[list[NodeInfo], list[NodeInfo], str | None] | None:
        """findNodesThatFitPod: PreFilter, evaluateNominatedNode, findNodesThatPassFilters and
        findNodesThatPassExtenders. (the feasible nodes, the candidates PreFilter left, the nominated node
        when it was evaluated and rejected), or None when the attempt is answered here (an error, or the
        batching hint taken)."""
        statuses = diagnosis.node_to_status
        pre_result, pre_status, plugins_with_nodes = self.framework.run_pre_filter(state, pod)
        if pre_status is not None and not pre_status.is_success():
            if not pre_status.is_rejected():
                result.error = result.message = pre_status.message
                return None
            statuses.absent_nodes_status = pre_status
            diagnosis.pre_filter_msg = pre_status.message
            result.pre_filter_status = pre_status
            return [], [], None
        hint = self._node_hint(state, pod, result, walk)
        rejected_nominated = self._evaluate_nominated_node(state, pod, result, hint and hint.name)
        if result.hinted:  # the hint passed: SchedulePod returns it, nothing else filtered or scored
            result.feasible = result.selected = [hint.name]
            result.scores = {hint.name: hint}
            result.schedule_pod_host, result.nodes_examined = hint.name, 1
            return None
        candidates = nodes
        if pre_result is not None and not pre_result.all_nodes():
            candidates = [ni for ni in nodes if ni.name in pre_result.node_names]
            names = sorted(plugins_with_nodes)
            statuses.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                [f"node(s) didn't satisfy plugin(s) [{' '.join(names)}]"], ",".join(names))
            for ni in nodes:
                if ni.name not in pre_result.node_names:
                    result.filtered[ni.name] = statuses.absent_nodes_status
        feasible = self.find_nodes_that_pass_filters(state, pod, candidates, statuses, walk, result,
                                                     rejected_nominated)
        if walk is None or result.nominated_node_fast_path:
            errors = [st for st in statuses.statuses.values() if st.code == Code.ERROR]
        else:  # a walk stops at the first error: the last status set, if any
            last = statuses.last_error()
            errors = [last] if last is not None else []
        if errors and not result.nominated_node_fast_path:  # the fast path never filters other nodes
            result.add_filtered(statuses)
            result.error = result.message = errors[0].message
            return None
        if removed:
            for ni in feasible:
                if ni.name in removed:
                    statuses.set(ni.name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [BEING_REMOVED]))
            feasible = [ni for ni in feasible if ni.name not in removed]
        feasible = self.find_nodes_that_pass_extenders(pod, feasible, statuses, result)
        result.add_filtered(statuses)
        return feasible, candidates, rejected_nominated

    def select_host(self, result: ScheduleResult, nodes: list[NodeInfo], candidates: list[NodeInfo],
                    feasible: list[NodeInfo], walk: NodeWalk | None) -> str | None:
        """selectHost where kube-scheduler's pick is fixed: the nominated node, the only top-scored node,
        or v1.35's heap over the feasible nodes in the order one worker filtered them (the node tree from
        index 0, or a sequence's walk from its start index; a PreFilter node set would be walked in map
        order), with no extender to randomize ties. None: one of the tied nodes, at random."""
        if result.nominated_node_fast_path or len(result.selected) == 1:
            return result.selected[0]
        if (len(nodes) < MIN_FEASIBLE_NODES_TO_FIND and self.framework.features.has(TOP_SCORE_HEAP)
                and self.parallelism == 1 and not self.extenders and len(candidates) == len(nodes)):
            order = ([ni.name for ni in node_tree_order(nodes) if ni.name in result.scores] if walk is None
                     else [ni.name for ni in feasible])
            return heap_top([result.scores[name].total_score for name in order], order)
        return None

    def _node_hint(self, state: CycleState, pod: PodInfo, result: ScheduleResult, walk: NodeWalk | None):
        """OpportunisticBatching's GetNodeHint, in a sequence's cycle once PreFilter passed: the next node
        of the profile's last ranking (with its scores then), taken out of it; None without one."""
        if walk is None or self.batch is None:
            return None
        result.batch_signature = self.batch.sign(pod)
        hint = self.batch.node_hint(pod, result.batch_signature, state, walk.cycle, self.snapshot)
        result.node_hint = hint.name if hint is not None else None
        return hint

    def record_cycle(self, result: ScheduleResult, chosen: str, cycle: int) -> None:
        """StoreScheduleResults after a cycle that placed its pod on ``chosen``: the other feasible nodes,
        best first (equal totals by name), become the profile's ranking. A hinted or nominated node taken
        without scoring, or a single feasible node, leaves none."""
        if self.batch is None:
            return
        others = None
        if not (result.hinted or result.nominated_node_fast_path):
            others = SortedScoredNodes(scores=result.scores, chosen=chosen)
        self.batch.store(result.batch_signature, result.node_hint, chosen, others, cycle)

    def _evaluate_nominated_node(self, state: CycleState, pod: PodInfo, result: ScheduleResult,
                                 hint: str | None = None) -> str | None:
        """evaluateNominatedNode: a pod that already carries status.nominatedNodeName tries that node first,
        alone (PreFilter's node set is not applied to it), else a batching hint; when it passes every
        filter and extender filter, SchedulePod returns it without looking at other nodes or scoring.
        Returns the node's name when it was evaluated and rejected (it then counts as examined), else None.
        An unknown node or a filter error falls through to the normal path, as kube-scheduler logs and
        goes on."""
        name = pod.nominated_node_name or hint
        node_info = self.snapshot.get(name) if name else None
        if node_info is None:
            return None
        status = self.framework.run_filter_with_nominated_pods(state, pod, node_info)
        if status is not None:
            return None if status.code == Code.ERROR else name
        passed = self.find_nodes_that_pass_extenders(pod, [node_info], NodeToStatus(), result)
        if passed:
            if pod.nominated_node_name:
                result.nominated_node_fast_path = True
            else:
                result.hinted = True
            return None
        return name

    def _sample(self, state: CycleState | None, pod: PodInfo, candidates: list[NodeInfo], result: ScheduleResult,
                rejected_nominated: str | None) -> Sampling:
        """The first cycle's sample (kwhatif.sampling) and kube-scheduler's pick among it: the sampled nodes
        that pass the extender filters are scored among themselves (PreScore and Score see only them;
        extender scores are per node and reused)."""
        k = self._num_to_find(len(candidates or self.snapshot.node_info_list))
        if result.nominated_node_fast_path:
            name = pod.nominated_node_name
            return Sampling(k, self.parallelism, True, [name], [name], 1)
        extender_rejected = {name for name, status in result.filtered.items() if status.plugin == EXTENDER_NAME}
        plugin_feasible = set(result.feasible) | extender_rejected
        all_examined = len(plugin_feasible) <= k
        whole_list = len(candidates) == len(self.snapshot.node_info_list)
        deterministic = all_examined or (self.parallelism == 1 and whole_list)
        if not deterministic:
            return Sampling(k, self.parallelism, False)
        sample, examined = walk(node_tree_order(candidates), plugin_feasible, k)
        nodes_examined = len(examined)
        if rejected_nominated and rejected_nominated not in examined:
            nodes_examined += 1  # its status stays in the cycle's diagnosis
        scored = [ni for ni in sample if ni.name not in extender_rejected]
        if len(scored) == len(result.feasible):
            selected = list(result.selected)
        elif len(scored) == 1:
            selected = [scored[0].name]
        elif not scored:
            selected = []
        else:
            selected = self._top_of(state, pod, scored, result)
        return Sampling(k, self.parallelism, True, [ni.name for ni in sample], selected, nodes_examined)

    def _num_to_find(self, num_nodes: int) -> int:
        """numFeasibleNodesToFind, or 1 when nothing would tell feasible nodes apart (no extender filters,
        no scoring): findNodesThatPassFilters then takes the first feasible node."""
        fw = self.framework
        if not any(e.cfg.filter_verb for e in self.extenders) and not (
                fw.has_score_plugins() or any(e.cfg.prioritize_verb for e in self.extenders)):
            return 1
        return num_feasible_nodes_to_find(fw.profile.percentage_of_nodes_to_score, num_nodes)

    def find_nodes_that_pass_filters(self, state: CycleState, pod: PodInfo, candidates: list[NodeInfo],
                                     statuses: NodeToStatus, walk: NodeWalk | None, result: ScheduleResult,
                                     rejected_nominated: str | None) -> list[NodeInfo]:
        """findNodesThatPassFilters. A single attempt (or a nominated node taken at once) filters every
        candidate, for information. A walk takes the candidates in node-tree order, circularly from the
        start index (modulo their number), until k + 1 feasible nodes were found (the last one dropped) or
        a Filter plugin errs; then nextStartNodeIndex advances by the nodes processed (the nominated node's
        rejection counts too: it is in the cycle's statuses). Candidates that PreFilter narrowed down come
        in an order kube-scheduler does not fix (a set), so their sample is marked not deterministic."""
        if walk is None or result.nominated_node_fast_path:
            feasible = []
            for ni, status in self.evaluation.filter_nodes(state, pod, candidates):
                if status is None:
                    feasible.append(ni)
                else:
                    statuses.set(ni.name, status)
            if walk is not None:
                result.nodes_examined = 1
            return feasible
        every_node = len(candidates) == len(self.snapshot.node_info_list)
        order = walk.order(self.snapshot)
        if not every_node:
            names = {ni.name for ni in candidates}
            order = [ni for ni in order if ni.name in names]
        start = walk.start % len(order) if order else 0
        k = self._num_to_find(len(order))
        feasible, examined = self.evaluation.find_feasible(state, pod, order, start, k, statuses)
        processed = examined
        if rejected_nominated and rejected_nominated not in statuses.statuses:
            processed += 1
        walk.advance(processed, len(self.snapshot.node_info_list))
        result.nodes_examined = processed
        if len(self.snapshot.node_info_list) >= MIN_FEASIBLE_NODES_TO_FIND:  # as a single attempt reports it
            deterministic = examined == len(order) or (every_node and self.parallelism == 1)
            result.sampling = Sampling(k, self.parallelism, deterministic, list(map(_name, feasible)), [],
                                       processed)
        return feasible

    def _top_of(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo], result: ScheduleResult) -> list[str]:
        """The top-score nodes when only ``nodes`` are scored (normalization among them)."""
        fw = self.framework
        status = fw.run_pre_score(state, pod, nodes)
        if status is not None:
            raise PluginError(status)
        scores = self.evaluation.score_nodes(state, pod, nodes)
        totals = {name: total + sum(result.extender_scores.get(name, {}).values())
                  for name, total in zip(scores.nodes, scores.totals)}
        best = max(totals.values())
        return sorted(name for name, total in totals.items() if total == best)

    def find_nodes_that_pass_extenders(self, pod: PodInfo, feasible: list[NodeInfo], statuses: NodeToStatus,
                              result: ScheduleResult) -> list[NodeInfo]:
        """findNodesThatPassExtenders: each interested extender filters the survivors of the last."""
        for extender in self.extenders:
            if not feasible:
                break
            if not extender.is_interested(pod):
                continue
            outcome = extender.filter(pod, feasible, result)
            if outcome is None:  # an ignorable extender failed: skipped, with a warning recorded
                continue
            feasible, failed, failed_unresolvable = outcome
            for name, msg in failed_unresolvable.items():
                statuses.set(name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg], EXTENDER_NAME))
            for name, msg in failed.items():
                if name not in failed_unresolvable:
                    statuses.set(name, Status(Code.UNSCHEDULABLE, [msg], EXTENDER_NAME))
        return feasible

    def prioritize_nodes(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo],
                         result: ScheduleResult) -> NodeScores:
        """prioritizeNodes: PreScore and Score plugins, then the interested extenders in parallel.

        A node gets an "Extender" entry only when some extender answered for it: extenders without a
        prioritizeVerb answer 0 for every node; one whose call failed gives nothing (upstream ignores
        prioritize errors). Each answer counts score * weight * (MaxNodeScore / MaxExtenderPriority).
        """
        fw = self.framework
        status = fw.run_pre_score(state, pod, nodes)
        if status is not None:
            raise PluginError(status)
        scores = self.evaluation.score_nodes(state, pod, nodes)
        interested = [e for e in self.extenders if e.is_interested(pod)]
        if interested:
            if len(interested) == 1:
                outcomes = [interested[0].prioritize(pod, nodes, result)]
            else:
                with ThreadPoolExecutor(max_workers=len(interested)) as pool:
                    outcomes = list(pool.map(lambda e: e.prioritize(pod, nodes, result), interested))
            extra: dict[str, int] = {}
            for extender, outcome in zip(interested, outcomes):
                if outcome is None:
                    continue
                host_scores, weight = outcome
                for host, score in host_scores:
                    weighted = score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
                    extra[host] = extra.get(host, 0) + weighted
                    per_node = result.extender_scores.setdefault(host, {})
                    per_node[extender.name] = per_node.get(extender.name, 0) + weighted
            for name in scores:
                if name in extra:
                    scores.add(name, EXTENDER_NAME, extra[name])
        # Scoring only happens when a node is selected, which is when kube-scheduler would bind: through
        # the first interested binder extender, if any. kwhatif never calls it; it reports it.
        result.extender_bind = next((e.name for e in self.extenders if e.is_binder() and e.is_interested(pod)),
                                    None)
        return scores
