"""The table layout (sized to the width, wrapping inside cells, optional columns left out, a shared
node-name suffix shown once) and the place table of a large cluster (best nodes, then the rejected ones
grouped by plugin and reason; --all-nodes for every row), rendered in an injected output environment."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from kwhatif.render.env import OutputEnv
from kwhatif.api.goduration import human_duration
from kwhatif.render.table import MAX_ROWS, render_place
from kwhatif.render.tables import Column, histogram, shared_suffix, table_lines
from kwhatif.whatif import place_pod
from tests.builders import cluster, make_node, make_pod

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _big_cluster(n: int = 120):
    """n nodes: every third tainted, every fourth of the rest too small, the others fit."""
    nodes = []
    for i in range(n):
        node = make_node(f"node-{i:05d}.eu-west-1.compute.internal")
        if i % 3 == 0:
            node.taint("dedicated", "infra")
        cpu = "500m" if i % 4 == 1 else "4"
        nodes.append(node.capacity(cpu=cpu, memory="8Gi", pods="110").obj())
    return cluster(nodes)


def _render(result, width: int | None, **kwargs) -> str:
    out = io.StringIO()
    render_place(result, console=OutputEnv(out, None, width, False).console(), **kwargs)
    return out.getvalue()


@pytest.fixture(scope="module")
def big_result():
    return place_pod(make_pod("p").req(cpu="1").obj(), "pod.yaml", _big_cluster())


def test_a_large_cluster_is_summarized(big_result):
    text = _render(big_result, 120)
    lines = text.splitlines()
    assert len(lines) < MAX_ROWS + 10
    # 40 tainted (0, 3, ... 117), 20 too small (1, 13, 25, ... : i % 4 == 1 and not i % 3 == 0): grouped with counts
    assert re.search(r"^\s*40\s+TaintToleration\s+node\(s\) had untolerated taint \{dedicated: infra\}\s+"
                     r"node-00000, node-00003, node-00006, \.\.\.$", text, re.M)
    assert re.search(r"^\s*20\s+NodeResourcesFit\s+Insufficient cpu\s+node-00001, node-00005, node-00013", text, re.M)
    # 60 feasible nodes tie for the top score: 15 shown, the others counted; the tie named in part
    words = " ".join(text.split())  # the long cells and sentences wrap at 120 columns
    assert "45 more feasible nodes, scores 473-473, 45 of them tied for the top score (--all-nodes" in words
    assert "60 nodes tie for the top score (node-00002.eu-west-1.compute.internal, " in words
    assert ", ... 50 more): kube-scheduler picks one of them at random." in words
    assert "Node names end in .eu-west-1.compute.internal" in text


def test_all_nodes_prints_every_node_and_node_focuses(big_result):
    rows = [line for line in _render(big_result, None, all_nodes=True).splitlines()
            if re.match(r"node-\d+\S* +(★ selected|fits|TaintToleration|NodeResourcesFit) ", line)]
    assert len(rows) == 120
    assert all(line.split()[0].endswith(".eu-west-1.compute.internal") for line in rows)  # piped: full names
    focused = _render(big_result, 120, nodes=["node-00000.eu-west-1.compute.internal"])
    assert [line.split()[:2] for line in focused.splitlines() if re.match(r"node-\d+ ", line)] == [
        ["node-00000", "TaintToleration"]]


def test_user_text_is_never_read_as_markup():
    pod = make_pod("gated").obj()
    pod["spec"]["schedulingGates"] = [{"name": "example.com/quota"}, {"name": "b"}]
    text = _render(place_pod(pod, "pod.yaml", cluster([make_node("n").capacity(cpu="1").obj()])), 120)
    assert "waiting for scheduling gates: [example.com/quota b]" in text


@pytest.mark.parametrize("names,suffix", [
    (["ip-1.eu-west-1.compute.internal", "ip-22.eu-west-1.compute.internal"], ".eu-west-1.compute.internal"),
    (["node-1", "node-2"], ""),  # no dot: nothing shared worth showing once
    (["a.b.io", "c.b.io"], ""),  # too short to be worth it
    (["x.eu-west-1.compute.internal"], ""),  # a single name
    ([".eu-west-1.compute.internal", "a.eu-west-1.compute.internal"], ""),  # one name would be empty
])
def test_shared_suffix(names, suffix):
    assert shared_suffix(names) == suffix


@pytest.mark.parametrize("seconds,age", [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (78.9, "78s"), (119, "119s"), (120, "2m"), (200, "3m20s"),
    (1075, "17m"), (3 * 3600 + 59 * 60, "3h59m"), (5 * 3600, "5h"), (30 * 3600, "30h"), (50 * 3600, "2d2h"),
    (22147 * 3600 + 52 * 60 + 20, "2y192d"), (400 * 86400, "400d"), (9 * 365 * 86400, "9y"),
])
def test_human_duration_as_kubectl(seconds, age):
    assert human_duration(seconds) == age


WORDS = st.text(alphabet="abcdefghij -/.★", min_size=0, max_size=60)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(WORDS, min_size=4, max_size=4), min_size=1, max_size=6),
       width=st.integers(min_value=30, max_value=160), colour=st.booleans())
def test_no_line_is_wider_than_the_width(rows, width, colour):
    columns = [Column("NODE"), Column("VERDICT"), Column("REASON", wrap=True), Column("Score", right=True,
                                                                                      optional=True)]
    styled = [[(row[0], "bold green"), *row[1:]] for row in rows]
    lines, _ = table_lines(columns, styled, width, colour)
    assert all(cell_len(ANSI.sub("", line)) <= width for line in lines)
    assert ("\x1b[" in "".join(lines)) == colour  # the header is bold


def test_piped_rows_stay_on_one_line_and_long_cells_wrap_in_place():
    columns = [Column("NODE"), Column("REASON", wrap=True), Column("TOTAL", right=True)]
    rows = [["n1", "node(s) had untolerated taint {nvidia.com/gpu: present}", "7"], ["n22", "", "100"]]
    piped, _ = table_lines(columns, rows, None, False)
    assert piped == ["NODE   REASON                                                    TOTAL",
                     "n1     node(s) had untolerated taint {nvidia.com/gpu: present}       7",
                     "n22                                                                100"]
    narrow, _ = table_lines(columns, rows, 40, False)
    assert narrow == ["NODE  REASON                       TOTAL",  # the gap narrows before the text wraps
                      "n1    node(s) had untolerated          7",
                      "      taint {nvidia.com/gpu:",
                      "      present}",
                      "n22                                  100"]


def test_an_old_lease_is_aged_as_kubectl_ages_it():
    from datetime import datetime, timezone

    from kwhatif.leader import LeaseRecord, assess

    lease = LeaseRecord.from_object({
        "kind": "Lease", "metadata": {"namespace": "kube-system", "name": "kube-scheduler"},
        "spec": {"holderIdentity": "cp-1_abc", "leaseDurationSeconds": 15,
                 "renewTime": "2024-05-14T09:28:41.000000Z"}})
    verdict = assess(lease, datetime(2026, 11, 23, 0, 0, tzinfo=timezone.utc))
    # 922 days and 14.5 hours: kubectl's 2y192d, not Go's 22142h31m19s
    assert verdict.consequence.startswith("The lease expired 2y192d ago: cp-1_abc last renewed 2y192d ago with")


def _printed(width: int | None, draw) -> str:
    out = io.StringIO()
    draw(OutputEnv(out, None, width, False).console())
    return out.getvalue()


def test_a_note_under_a_table_wraps_inside_its_column():
    from kwhatif.render.tables import print_hanging, print_warnings

    text = "the pod would be refused by the API server; it was evaluated as the scheduler would see it anyway"
    assert _printed(40, lambda c: print_hanging(c, "  Note: ", text)) == (
        "  Note: the pod would be refused by the\n"
        "        API server; it was evaluated as\n"
        "        the scheduler would see it\n"
        "        anyway\n")
    assert _printed(None, lambda c: print_warnings(c, [text])) == f"warning: {text}\n"


def test_suggestions_wrap_inside_their_columns():
    from types import SimpleNamespace

    from kwhatif.render.suggest import render_suggestions

    suggestion = SimpleNamespace(change="remove taint nvidia.com/gpu=present:NoSchedule from node-a",
                                 feasible_count=1, would_select="node-a", note="the taint is on 2 node(s)")
    found = SimpleNamespace(suggestions=[suggestion], blockers=[], notes=["every change was tried on its own"])
    # side by side, the taint would break: each outcome goes under its change
    assert _printed(60, lambda c: render_suggestions(found, c)).splitlines()[2:] == [
        "  remove taint nvidia.com/gpu=present:NoSchedule from node-a",
        "    -> fits on 1 node(s); kube-scheduler would pick node-a",
        "       (the taint is on 2 node(s))",
        "  Note: every change was tried on its own"]
    assert _printed(120, lambda c: render_suggestions(found, c)).splitlines()[1:3] == [
        "  remove taint nvidia.com/gpu=present:NoSchedule from        -> fits on 1 node(s); kube-scheduler would pick "
        "node-a (the",
        "  node-a                                                        taint is on 2 node(s))"]
    piped = _printed(None, lambda c: render_suggestions(found, c)).splitlines()
    assert piped[1] == ("  remove taint nvidia.com/gpu=present:NoSchedule from node-a  -> fits on 1 node(s); "
                        "kube-scheduler would pick node-a (the taint is on 2 node(s))")


@pytest.mark.parametrize("width,expected", [
    (60, ["NODE           REJECTED BY       REASON",
          "ip-10-0-1-201  TaintToleration   node(s) had untolerated",
          "                                 taint(s)",
          "ip-10-0-3-120  NodeResourcesFit  Insufficient cpu"]),
    # the name columns keep their longest cell; the reason moves under its row rather than breaking a word
    # (indented under the second column when that leaves it room)
    (40, ["NODE           REJECTED BY",
          "ip-10-0-1-201  TaintToleration",
          "  node(s) had untolerated taint(s)",
          "ip-10-0-3-120  NodeResourcesFit",
          "  Insufficient cpu"]),
    (50, ["NODE           REJECTED BY       REASON",
          "ip-10-0-1-201  TaintToleration   node(s) had",
          "                                 untolerated",
          "                                 taint(s)",
          "ip-10-0-3-120  NodeResourcesFit  Insufficient cpu"]),
])
def test_names_never_break_and_text_wraps_at_spaces(width, expected):
    columns = [Column("NODE"), Column("REJECTED BY"), Column("REASON", wrap=True)]
    rows = [["ip-10-0-1-201", "TaintToleration", "node(s) had untolerated taint(s)"],
            ["ip-10-0-3-120", "NodeResourcesFit", "Insufficient cpu"]]
    assert table_lines(columns, rows, width, False)[0] == expected


def test_a_moved_cell_starts_under_the_second_column_when_it_has_room():
    columns = [Column("NODE"), Column("REJECTED BY"), Column("REASON", wrap=True)]
    rows = [["ip-10-0-1-201", "TaintToleration", "node(s) had untolerated taint {nvidia.com/gpu: present}"]]
    assert table_lines(columns, rows, 47, False)[0] == [
        "NODE           REJECTED BY",
        "ip-10-0-1-201  TaintToleration",
        "               node(s) had untolerated taint",
        "               {nvidia.com/gpu: present}"]


def test_only_a_terminal_narrower_than_a_name_folds_it():
    lines, _ = table_lines([Column("NODE"), Column("TOTAL", right=True)], [["ip-10-0-1-201", "853"]], 12, False)
    assert all(len(line) <= 12 for line in lines) and "".join(lines).count("853") == 1


@pytest.mark.parametrize("fraction,drawn", [(0, "░░░░░░░░░░"), (0.25, "██▌░░░░░░░"), (1, "██████████"),
                                            (1.7, "██████████"), (0.005, "░░░░░░░░░░"), (0.01, "▏░░░░░░░░░")])
def test_a_bar_is_drawn_in_eighths_of_a_cell(fraction, drawn):
    from kwhatif.render.tables import bar

    assert bar(fraction) == drawn


def test_bars_on_a_terminal_numbers_alone_on_a_pipe():
    from kwhatif.render.tables import with_bars

    texts = ["35m", "1445m"]
    assert with_bars(OutputEnv(io.StringIO(), None, 80, False).console(), [0.005, 0.5], texts) == [
        "  35m ░░░░░░░░░░", "1445m █████░░░░░"]
    assert with_bars(OutputEnv(io.StringIO(), None, None, False).console(), [0.01, 0.5], texts) == texts


@pytest.mark.parametrize("values,lines", [
    # five equal ranges of the span, each with its count; the largest count fills the bar
    ([111, 111, 111, 200, 468], ["111-181 ████████████████████ 3", "182-253 ██████▋░░░░░░░░░░░░░ 1",
                                 "254-324 ░░░░░░░░░░░░░░░░░░░░ 0", "325-396 ░░░░░░░░░░░░░░░░░░░░ 0",
                                 "397-468 ██████▋░░░░░░░░░░░░░ 1"]),
    ([5, 6, 6, 7], ["5 ██████████░░░░░░░░░░ 1", "6 ████████████████████ 2", "7 ██████████░░░░░░░░░░ 1"]),  # fewer values
    ([5, 5], []),  # one score: nothing to picture
])
def test_the_hidden_scores_spread_as_a_histogram(values, lines):
    assert histogram(values) == lines


def test_the_histogram_is_drawn_below_the_summarized_table_on_a_terminal_only():
    """A cluster of 120 nodes with scores that differ: the hidden feasible nodes' scores as a histogram at
    a terminal; piped, the sentence alone (the numbers a script reads)."""
    nodes = [make_node(f"node-{i:03d}").capacity(cpu=str(2 + i % 7), memory="8Gi", pods="110").obj()
             for i in range(120)]
    result = place_pod(make_pod("p").req(cpu="1").obj(), "pod.yaml", cluster(nodes))
    hidden = sorted(result.scores[n].total_score for n in result.feasible)[:-15]
    terminal, piped = _render(result, 120).splitlines(), _render(result, None).splitlines()
    at = next(i for i, line in enumerate(terminal) if line.startswith(f"... {len(hidden)} more feasible nodes, "
                                                                     f"scores {min(hidden)}-{max(hidden)}, "))
    assert terminal[at].endswith("(--all-nodes lists them), by score:")
    bars = terminal[at + 1:at + 6]
    assert [line.strip() for line in bars] == histogram(hidden) and len(set(hidden)) > 5
    assert sum(int(line.split()[-1]) for line in bars) == len(hidden)
    assert not any("█" in line for line in piped) and any(line.endswith("(--all-nodes lists them).") for line in piped)


def test_a_word_longer_than_the_hanging_column_puts_the_text_under_its_lead():
    from kwhatif.render.tables import print_hanging

    text = "the claim reads dynamicresources/extendeddynamicresources.go first"
    assert _printed(60, lambda c: print_hanging(c, "    DynamicResources: ", text)) == (
        "    DynamicResources:\n"
        "      the claim reads\n"
        "      dynamicresources/extendeddynamicresources.go first\n")
