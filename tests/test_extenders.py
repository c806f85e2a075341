"""Scheduler extenders over real HTTP (kwhatif/extenders/): loopback servers in threads answer the
kube-scheduler extender protocol, and every expectation is what kube-scheduler v1.34 does with the
same answers (pkg/scheduler/extender.go, schedule_one.go, framework/preemption/preemption.go)."""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kwhatif.errors import ExitStatus, KwhatifError, UnreachableError
from kwhatif.extenders.answers import decode_filter_result, decode_host_priority_list, decode_preemption_result
from kwhatif.extenders.errors import ExtenderError, ExtenderUnreachableError
from kwhatif.extenders.extender import build_extenders
from kwhatif.extenders.gojson import JSONError
from kwhatif.whatif import SchedulerSetup, place_pod
from tests.builders import cluster, make_node, make_pod
from tests.conftest import free_port


class Raw:
    """A handler answer sent verbatim: status, body bytes, an optional delay before answering and an
    optional pause after each byte of the body."""

    def __init__(self, status: int = 200, body: bytes = b"", delay: float = 0.0, trickle: float = 0.0) -> None:
        self.status, self.body, self.delay, self.trickle = status, body, delay, trickle


class ExtenderServer:
    """A loopback extender: ``on(verb, fn)`` sets the answer to POST /ext/<verb> (fn gets the decoded
    request); every request is recorded in ``requests`` as (path, decoded body)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.handlers: dict[str, object] = {}
        self.requests: list[tuple[str, object]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                args = json.loads(body) if body else None
                owner.requests.append((self.path, args))
                fn = owner.handlers.get(self.path)
                answer = fn(args) if fn else Raw(404, b'{"Error": "no such verb"}')
                if not isinstance(answer, Raw):
                    answer = Raw(200, json.dumps(answer).encode())
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    if not answer.trickle:
                        self.wfile.write(answer.body)
                    for i in range(len(answer.body) if answer.trickle else 0):
                        self.wfile.write(answer.body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(answer.trickle)
                except OSError:  # the client gave up (timeout tests)
                    pass

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.scheme = "http"
        if ssl_context is not None:
            self.httpd.socket = ssl_context.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}/ext"

    def on(self, verb: str, fn) -> "ExtenderServer":
        self.handlers[f"/ext/{verb}"] = fn
        return self

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def bodies(self, verb: str) -> list:
        return [body for path, body in self.requests if path == f"/ext/{verb}"]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers():
    """A factory of loopback extenders, all shut down after the test."""
    started: list[ExtenderServer] = []

    def start(ssl_context: ssl.SSLContext | None = None) -> ExtenderServer:
        server = ExtenderServer(ssl_context)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


# --- answers the test extenders give ----------------------------------------------------------------


def node_names(args: dict) -> list[str]:
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in args["Nodes"]["items"]]


def keep(*reject: str, unresolvable: tuple[str, ...] = ()):
    """A filter that keeps every node but ``reject`` (FailedNodes) and ``unresolvable``, answering in
    the form it was asked in (Node objects, or names when nodeCacheCapable)."""

    def fn(args: dict) -> dict:
        failed = {n: f"{n} rejected" for n in node_names(args) if n in reject}
        unres = {n: f"{n} unresolvable" for n in node_names(args) if n in unresolvable}
        if args.get("NodeNames") is not None:
            return {"NodeNames": [n for n in args["NodeNames"] if n not in failed and n not in unres],
                    "FailedNodes": failed, "FailedAndUnresolvableNodes": unres}
        items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] not in failed | unres]
        return {"Nodes": {"items": items}, "FailedNodes": failed, "FailedAndUnresolvableNodes": unres}

    return fn


def scores(**by_node: int):
    return lambda args: [{"Host": n, "Score": by_node.get(n.replace("-", "_"), 0)} for n in node_names(args)]


# --- a small cluster ------------------------------------------------------------------------------------


def two_nodes(pods_on_n1: bool = True):
    nodes = [make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj(),
             make_node("n2").capacity(cpu="4", memory="8Gi", pods="110").obj()]
    pods = [make_pod("busy").uid("uid-busy").req(cpu="2", memory="4Gi").node("n1").obj()] if pods_on_n1 else []
    return cluster(nodes, pods)


def pod(**requests: str) -> dict:
    return make_pod("incoming").req(**(requests or {"cpu": "1", "memory": "1Gi"})).obj()


def run(extenders: list[dict], cl=None, incoming: dict | None = None, trace: list | None = None):
    cl = cl or two_nodes()
    return place_pod(incoming or pod(), "pod.json", cl, SchedulerSetup(extenders=extenders), trace=trace)


def cfg(server: ExtenderServer, **fields) -> dict:
    return {"urlPrefix": server.url, "weight": 1, **fields}


def plugin_scores(result, node: str) -> dict[str, int]:
    return {ps.name: ps.score for ps in result.scores[node].scores}


# --- nodeCacheCapable -----------------------------------------------------------------------------------


def test_not_node_cache_capable_sends_node_objects_and_scores_returned_nodes_as_empty(servers):
    server = servers().on("filter", keep())
    result = run([cfg(server, filterVerb="filter")])
    (args,) = server.bodies("filter")
    assert args["NodeNames"] is None
    assert [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["n1", "n2"]
    assert args["Pod"]["metadata"]["name"] == "incoming"
    assert sorted(result.feasible) == ["n1", "n2"]
    # The NodeInfos rebuilt from the answer have no pods: n1 (2 of 4 cpu in use) scores like empty n2.
    # LeastAllocated with 1 cpu / 1Gi on 4 cpu / 8Gi: ((4-1)*100/4 + (8-1)*100/8) / 2 = (75 + 87) / 2 = 81.
    assert plugin_scores(result, "n1")["NodeResourcesFit"] == plugin_scores(result, "n2")["NodeResourcesFit"] == 81
    assert any("scored as if empty" in w and "n1" in w for w in result.warnings)


def test_node_cache_capable_sends_names_and_keeps_the_nodes_pods(servers):
    server = servers().on("filter", keep())
    result = run([cfg(server, filterVerb="filter", nodeCacheCapable=True)])
    (args,) = server.bodies("filter")
    assert args["Nodes"] is None and args["NodeNames"] == ["n1", "n2"]
    # n1 keeps its 2 cpu / 4Gi pod: ((4-3)*100/4 + (8-5)*100/8) / 2 = (25 + 37) / 2 = 31.
    assert plugin_scores(result, "n1")["NodeResourcesFit"] == 31
    assert plugin_scores(result, "n2")["NodeResourcesFit"] == 81
    assert not result.warnings


def test_node_cache_capable_extender_answering_node_objects_gets_the_empty_node_quirk_too(servers):
    server = servers().on("filter", lambda args: {"Nodes": {"items": [
        make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in args["NodeNames"]]}})
    result = run([cfg(server, filterVerb="filter", nodeCacheCapable=True)])
    assert plugin_scores(result, "n1")["NodeResourcesFit"] == 81


def test_answer_without_nodes_or_names_drops_every_node_without_a_reason(servers):
    server = servers().on("filter", lambda args: {"FailedNodes": {}})
    result = run([cfg(server, filterVerb="filter")])
    assert result.feasible == [] and result.filtered == {}
    assert result.message.startswith("0/2 nodes are available:")
    assert any("neither Nodes nor NodeNames" in w for w in result.warnings)


# --- filter statuses, chaining ------------------------------------------------------------------------


def test_failed_and_unresolvable_nodes_become_extender_statuses(servers):
    server = servers().on("filter", keep("n1", unresolvable=("n2",)))
    result = run([cfg(server, filterVerb="filter")])
    assert result.feasible == []
    d = result.to_dict()["filtered"]
    assert d["n1"] == {"plugin": "Extender", "code": "Unschedulable", "reasons": ["n1 rejected"]}
    assert d["n2"] == {"plugin": "Extender", "code": "UnschedulableAndUnresolvable", "reasons": ["n2 unresolvable"]}


def test_a_node_in_both_maps_is_unresolvable(servers):
    server = servers().on("filter", lambda args: {"Nodes": {"items": []}, "FailedNodes": {"n1": "a", "n2": "b"},
                                                  "FailedAndUnresolvableNodes": {"n1": "c"}})
    result = run([cfg(server, filterVerb="filter")])
    assert result.filtered["n1"].code.label == "UnschedulableAndUnresolvable"
    assert result.filtered["n1"].reasons == ["c"]
    assert result.filtered["n2"].reasons == ["b"]


def test_two_filter_extenders_run_in_order_on_the_survivors(servers):
    first = servers().on("filter", keep("n1"))
    second = servers().on("filter", keep("n2"))
    result = run([cfg(first, filterVerb="filter"), cfg(second, filterVerb="filter", nodeCacheCapable=True)])
    assert node_names(first.bodies("filter")[0]) == ["n1", "n2"]
    assert second.bodies("filter")[0]["NodeNames"] == ["n2"]
    assert result.feasible == []
    assert result.filtered["n1"].reasons == ["n1 rejected"]
    assert result.filtered["n2"].reasons == ["n2 rejected"]
    assert result.message.startswith("0/2 nodes are available: 1 n1 rejected, 1 n2 rejected. ")


def test_a_later_extender_is_not_called_once_no_node_is_left(servers):
    first = servers().on("filter", keep("n1", "n2"))
    second = servers().on("filter", keep())
    run([cfg(first, filterVerb="filter"), cfg(second, filterVerb="filter")])
    assert second.requests == []


# --- managedResources -------------------------------------------------------------------------------


@pytest.mark.parametrize("incoming, interested", [
    (make_pod("p").req(cpu="1").obj(), False),
    (make_pod("p").req(cpu="1", **{"example.com/widget": "1"}).obj(), True),
    (make_pod("p").set("spec.containers", [{"name": "c", "image": "i", "resources": {
        "limits": {"example.com/widget": "1"}}}]).obj(), True),
    (make_pod("p").req(cpu="1").init_req(**{"example.com/widget": "1"}).obj(), True),
    (make_pod("p").req(cpu="1", **{"example.com/other": "1"}).obj(), False),
])
def test_managed_resources_decide_whether_the_extender_is_asked(servers, incoming, interested):
    server = servers().on("filter", keep()).on("prioritize", scores(n1=3))
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi", pods="110", **{"example.com/widget": "2",
                                                                          "example.com/other": "2"}).obj()
             for n in ("n1", "n2")]
    result = run([cfg(server, filterVerb="filter", prioritizeVerb="prioritize",
                      managedResources=[{"name": "example.com/widget"}])], cluster(nodes), incoming)
    assert bool(server.requests) is interested
    assert ("Extender" in plugin_scores(result, "n1")) is interested


def test_ignored_by_scheduler_resources_are_not_checked_by_node_resources_fit(servers):
    from kwhatif.framework.scheduler_config.loader import scheduler_config_from_dict

    server = servers().on("filter", keep())
    incoming = pod(cpu="1", **{"example.com/widget": "1"})
    cl = two_nodes(pods_on_n1=False)

    def config(ignored: bool) -> dict:
        return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "extenders": [cfg(server, filterVerb="filter", managedResources=[
                    {"name": "example.com/widget", "ignoredByScheduler": ignored}])]}

    strict = place_pod(incoming, "pod.json", cl, scheduler_config_from_dict(config(False), "c.yaml"))
    assert strict.feasible == [] and strict.filtered["n1"].reasons == ["Insufficient example.com/widget"]
    assert server.requests == []  # nothing passed the plugins, so the extender was not asked
    lenient = place_pod(incoming, "pod.json", cl, scheduler_config_from_dict(config(True), "c.yaml"))
    assert sorted(lenient.feasible) == ["n1", "n2"]
    assert len(server.bodies("filter")) == 1


# --- prioritize and weights -------------------------------------------------------------------------


def test_weighted_scores_of_several_extenders_add_up_times_ten(servers):
    a = servers().on("prioritize", scores(n1=3, n2=10))
    b = servers().on("prioritize", scores(n1=7))
    filter_only = servers().on("filter", keep())
    result = run([cfg(a, prioritizeVerb="prioritize", weight=2), cfg(b, prioritizeVerb="prioritize", weight=5),
                  cfg(filter_only, filterVerb="filter", nodeCacheCapable=True)])
    # n1: 3*2*10 + 7*5*10 + 0 = 60 + 350 = 410; n2: 10*2*10 + 0*5*10 + 0 = 200.
    assert plugin_scores(result, "n1")["Extender"] == 410
    assert plugin_scores(result, "n2")["Extender"] == 200
    assert filter_only.bodies("prioritize") == []  # no prioritizeVerb: scores 0 without a call
    n1 = result.scores["n1"]
    assert n1.total_score == sum(ps.score for ps in n1.scores)
    # Per extender (the table's columns, named by urlPrefix).
    assert result.extender_scores["n1"] == {a.url: 60, b.url: 350, filter_only.url: 0}
    assert result.extender_scores["n2"] == {a.url: 200, b.url: 0, filter_only.url: 0}


def test_filter_only_extender_contributes_zero(servers):
    server = servers().on("filter", keep())
    result = run([cfg(server, filterVerb="filter")])
    assert plugin_scores(result, "n1")["Extender"] == 0


def test_a_failing_prioritize_gives_no_extender_score_even_when_not_ignorable(servers):
    server = servers().on("prioritize", lambda args: Raw(500))
    result = run([cfg(server, prioritizeVerb="prioritize", weight=3)])
    assert "Extender" not in plugin_scores(result, "n1")
    assert sorted(result.feasible) == ["n1", "n2"]
    assert any("prioritize failed" in w and "code 500" in w for w in result.warnings)


def test_hosts_the_extender_invents_are_ignored_and_missing_ones_get_nothing(servers):
    server = servers().on("prioritize", lambda args: [{"Host": "ghost", "Score": 9}, {"Host": "n2", "Score": 1}])
    result = run([cfg(server, prioritizeVerb="prioritize", weight=1)])
    assert "Extender" not in plugin_scores(result, "n1")
    assert plugin_scores(result, "n2")["Extender"] == 10
    assert "ghost" not in result.scores


def test_prioritize_calls_run_in_parallel(servers):
    """Each extender answers only once all three calls have arrived: one after the other, the first
    would wait in vain until its barrier breaks and the extender answers 500 (no score, a warning)."""
    all_arrived = threading.Barrier(3, timeout=4.0)  # below the extenders' 5 s httpTimeout

    def answer_when_all_arrived(args):
        try:
            all_arrived.wait()
        except threading.BrokenBarrierError:
            return Raw(500, b"called one after the other")
        return scores(n1=1, n2=2)(args)

    parallel = [servers().on("prioritize", answer_when_all_arrived) for _ in range(3)]
    result = run([cfg(s, prioritizeVerb="prioritize") for s in parallel])
    assert result.warnings == []
    # Each extender's 1 or 2 times weight 1 times 10, three times over.
    assert (plugin_scores(result, "n1")["Extender"], plugin_scores(result, "n2")["Extender"]) == (30, 60)


# --- failures, ignorable or not -----------------------------------------------------------------------


def refused_url() -> str:
    return f"http://127.0.0.1:{free_port()}/ext"


FAILURES = {
    "connection refused": (None, UnreachableError,
                           lambda url: f'Post "{url}/filter": dial tcp {url[7:url.index("/ext")]}: connect: '
                                       "connection refused"),
    "timeout": (lambda args: Raw(200, b"{}", delay=1.5), UnreachableError,
                lambda url: f'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while '
                            "awaiting headers)"),
    "HTTP 500": (lambda args: Raw(500, b"oops"), ExtenderError,
                 lambda url: f"failed filter with extender at URL {url}/filter, code 500"),
    "bad JSON": (lambda args: Raw(200, b"<html>bad gateway</html>"), ExtenderError,
                 lambda url: "invalid character '<' looking for beginning of value"),
    "wrong JSON type": (lambda args: {"FailedNodes": ["n1"]}, ExtenderError,
                        lambda url: "json: cannot unmarshal array into Go struct field "
                                    "ExtenderFilterResult.FailedNodes of type v1.FailedNodesMap"),
    "Error field": (lambda args: {"Error": "license server unavailable"}, ExtenderError,
                    lambda url: "license server unavailable"),
    "unknown node": (lambda args: {"NodeNames": ["n1", "ghost"]}, ExtenderError,
                     lambda url: f'extender "{url}" claims a filtered node "ghost" which is not found in the '
                                 "input node list"),
}


@pytest.mark.parametrize("ignorable", [False, True], ids=["not-ignorable", "ignorable"])
@pytest.mark.parametrize("failure", list(FAILURES))
def test_filter_failures(servers, failure, ignorable):
    handler, error_class, message = FAILURES[failure]
    if handler is None:
        url = refused_url()
    else:
        url = servers().on("filter", handler).url
    extender = {"urlPrefix": url, "filterVerb": "filter", "nodeCacheCapable": True, "httpTimeout": "300ms",
                "ignorable": ignorable}
    if not ignorable:
        with pytest.raises(error_class) as info:
            run([extender])
        assert str(info.value) == message(url)
        assert isinstance(info.value, (ExtenderError, ExtenderUnreachableError))
        assert info.value.exit_status == (ExitStatus.UNREACHABLE if error_class is UnreachableError
                                          else ExitStatus.BAD_INPUT)
        return
    result = run([extender])
    assert sorted(result.feasible) == ["n1", "n2"]  # the extender is skipped, as kube-scheduler skips it
    assert result.filtered == {}
    assert any(message(url) in w and "ignorable" in w for w in result.warnings)


def test_a_timeout_is_the_whole_call_not_each_read(servers):
    """http.Client.Timeout bounds the whole exchange: a body trickling in still times out, and the
    error then comes from reading the body (not wrapped in 'Post "<url>"')."""
    server = servers().on("filter", lambda args: Raw(200, b"{}" + b" " * 8, trickle=0.1))
    with pytest.raises(ExtenderUnreachableError) as info:
        run([cfg(server, filterVerb="filter", httpTimeout="500ms")])
    assert str(info.value) == "context deadline exceeded (Client.Timeout exceeded while reading body)"


def test_http_timeout_defaults():
    url = refused_url()
    assert build_extenders([{"urlPrefix": url, "httpTimeout": "2s"}])[0].cfg.timeout == 2.0
    assert build_extenders([{"urlPrefix": url}])[0].cfg.timeout == 5.0  # DefaultExtenderTimeout
    assert build_extenders([{"urlPrefix": url, "httpTimeout": "0s"}])[0].cfg.timeout == 5.0
    assert build_extenders([{"urlPrefix": url, "httpTimeout": "-1s"}])[0].cfg.timeout is None  # no limit


def test_ignorable_extenders_are_moved_last(servers):
    a, b, c = servers(), servers(), servers()
    built = build_extenders([cfg(a, ignorable=True), cfg(b), cfg(c)])
    assert [e.name for e in built] == [b.url, c.url, a.url]


def test_node_objects_the_extender_was_not_sent_are_accepted_with_a_warning(servers):
    """Only nodeCacheCapable answers are checked against the input; Node objects are taken as sent back."""
    server = servers().on("filter", lambda args: {"Nodes": {"items": [
        make_node("n9").capacity(cpu="4", memory="8Gi", pods="110").obj()]}})
    result = run([cfg(server, filterVerb="filter")])
    assert result.feasible == ["n9"]
    assert any("it was not sent" in w and "n9" in w for w in result.warnings)


# --- preemption -----------------------------------------------------------------------------------


HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}


def preemption_cluster():
    """n1 is full of a priority-0 pod; n2 is free (only an extender can reject it)."""
    nodes = [make_node("n1").capacity(cpu="2", memory="8Gi", pods="110").obj(),
             make_node("n2").capacity(cpu="2", memory="8Gi", pods="110").obj()]
    pods = [make_pod("low").uid("uid-low").req(cpu="2").node("n1").obj()]
    return cluster(nodes, pods, [HIGH])


def preemptor() -> dict:
    return make_pod("high").set("spec.priorityClassName", "high").req(cpu="1").obj()


def n2_unresolvable(server: ExtenderServer, **fields) -> dict:
    """An extender that rules n2 out for good, so that the pod can only get in by preemption on n1."""
    server.on("filter", keep(unresolvable=("n2",)))
    return cfg(server, filterVerb="filter", **fields)


def pass_through(args: dict) -> dict:
    if args["NodeNameToMetaVictims"] is not None:
        return {"NodeNameToMetaVictims": args["NodeNameToMetaVictims"]}
    return {"NodeNameToMetaVictims": {
        node: {"Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]], "NumPDBViolations": v["NumPDBViolations"]}
        for node, v in args["NodeNameToVictims"].items()}}


@pytest.mark.parametrize("unresolvable, potential", [(True, ["n1"]), (False, ["n1", "n2"])])
def test_failed_and_unresolvable_nodes_are_not_tried_by_preemption(servers, unresolvable, potential):
    server = servers().on("filter", keep(*(() if unresolvable else ("n2",)),
                                         unresolvable=("n2",) if unresolvable else ()))
    server.on("preempt", pass_through)
    result = run([cfg(server, filterVerb="filter", preemptVerb="preempt")], preemption_cluster(), preemptor())
    assert sorted(result.preemption.potential_nodes) == potential
    (args,) = server.bodies("preempt")
    assert list(args["NodeNameToVictims"]) == ["n1"]
    assert result.to_dict()["preemption"]["candidates"] == {"n1": {"victims": ["default/low"], "numPDBViolations": 0}}


@pytest.mark.parametrize("cache_capable", [False, True])
def test_preempt_sends_full_victims_or_uids(servers, cache_capable):
    server = servers().on("preempt", pass_through)
    run([n2_unresolvable(server, preemptVerb="preempt", nodeCacheCapable=cache_capable)], preemption_cluster(),
        preemptor())
    (args,) = server.bodies("preempt")
    assert args["Pod"]["metadata"]["name"] == "high"
    if cache_capable:
        assert args["NodeNameToVictims"] is None
        assert args["NodeNameToMetaVictims"] == {"n1": {"Pods": [{"UID": "uid-low"}], "NumPDBViolations": 0}}
    else:
        assert args["NodeNameToMetaVictims"] is None
        assert [p["metadata"]["name"] for p in args["NodeNameToVictims"]["n1"]["Pods"]] == ["low"]


def test_preempt_answer_narrows_the_candidates(servers):
    server = servers().on("preempt", lambda args: {"NodeNameToMetaVictims": {}})
    result = run([n2_unresolvable(server, preemptVerb="preempt")], preemption_cluster(), preemptor())
    assert result.to_dict()["preemption"]["candidates"] == {}
    assert result.preemption.nominated_node is None


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_failing_preempt_verb(servers, ignorable):
    """Not ignorable: callExtenders returns the error as PostFilter's status, appended to the FitError
    message; ignorable: skipped, and the candidates stand."""
    server = servers().on("preempt", lambda args: Raw(500))
    result = run([n2_unresolvable(server, preemptVerb="preempt", ignorable=ignorable)], preemption_cluster(),
                 preemptor())
    if ignorable:
        assert result.preemption.nominated_node == "n1"
        return
    error = f"failed preempt with extender at URL {server.url}/preempt, code 500"
    assert result.preemption.nominated_node is None
    assert result.message.endswith(" " + error)


def test_preempt_claiming_a_pod_that_is_not_on_the_node(servers):
    server = servers().on("preempt", lambda args: {"NodeNameToMetaVictims": {
        "n1": {"Pods": [{"UID": "uid-nope"}], "NumPDBViolations": 0}}})
    extender = build_extenders([cfg(server, preemptVerb="preempt")])[0]
    from kwhatif.preemption import Victims
    from tests.builders import snapshot

    snap = snapshot([make_node("n1").obj()], [make_pod("low").uid("uid-low").node("n1").obj()])
    with pytest.raises(ExtenderError) as info:
        extender.process_preemption(make_pod("high").info(), {"n1": Victims(snap.get("n1").pods, 0)},
                                    snap.node_info_map)
    assert str(info.value) == (f"extender: {server.url} claims to preempt pod (UID: &{{uid-nope}}) on node: n1, "
                               "but the pod is not found on that node")
    ignorable = build_extenders([cfg(server, preemptVerb="preempt", ignorable=True)])[0]
    assert ignorable.process_preemption(make_pod("high").info(), {"n1": Victims(snap.get("n1").pods, 0)},
                                        snap.node_info_map) is None


# --- bind is never called -----------------------------------------------------------------------------


def test_no_request_ever_reaches_the_bind_verb(servers, tmp_path):
    server = servers().on("prioritize", scores(n2=5)).on("preempt", pass_through)
    server.on("bind", lambda args: pytest.fail("kwhatif called the bind verb"))
    extenders = [n2_unresolvable(server, prioritizeVerb="prioritize", preemptVerb="preempt", bindVerb="bind")]
    fits = run(extenders, two_nodes(pods_on_n1=False))
    assert fits.selected == ["n1"] and fits.extender_bind == server.url
    preempts = run(extenders, preemption_cluster(), preemptor())
    assert preempts.feasible == [] and preempts.extender_bind is None
    assert preempts.preemption.nominated_node == "n1"
    from typer.testing import CliRunner

    from kwhatif.cli.app import app

    (tmp_path / "c.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in ("n1", "n2")]}))
    (tmp_path / "s.json").write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                                 "kind": "KubeSchedulerConfiguration", "extenders": extenders}))
    (tmp_path / "p.json").write_text(json.dumps(pod()))
    out = CliRunner().invoke(app, ["place", str(tmp_path / "p.json"), "-c", str(tmp_path / "c.json"),
                                   "--scheduler-config", str(tmp_path / "s.json"), "-o", "json",
                                   "--trace-extenders"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["extenderBind"] == server.url
    assert [c["verb"] for c in doc["extenderTrace"]] == ["filter", "prioritize"]
    assert all(not path.endswith("/bind") for path in server.paths())
    assert {p.rsplit("/", 1)[1] for p in server.paths()} == {"filter", "prioritize", "preempt"}


# --- trace ------------------------------------------------------------------------------------------


def test_trace_records_each_call_with_bodies(servers):
    from kwhatif.render.extenders import format_trace

    server = servers().on("filter", keep("n1")).on("prioritize", scores(n2=4))
    trace: list = []
    result = run([cfg(server, filterVerb="filter", prioritizeVerb="prioritize", weight=2)], trace=trace)
    assert [c["verb"] for c in trace] == ["filter", "prioritize"]
    f, p = trace
    assert f["url"] == server.url + "/filter" and f["nodes"] == ["n1", "n2"] and f["httpStatus"] == 200
    assert f["answer"] == {"nodes": ["n2"], "failedNodes": {"n1": "n1 rejected"}, "failedAndUnresolvableNodes": {}}
    assert f["latencyMs"] >= 0 and f["request"]["Pod"]["metadata"]["name"] == "incoming"
    assert f["response"]["FailedNodes"] == {"n1": "n1 rejected"}
    assert p["answer"] == {"scores": [{"host": "n2", "score": 4}], "weight": 2}
    assert "one node is feasible" in p["note"]  # kube-scheduler itself would not have scored
    text = "\n".join(format_trace(trace))
    assert "failed 1: n1 (n1 rejected)" in text and "n2=4" in text
    assert result.feasible == ["n2"]


# --- HTTPS -----------------------------------------------------------------------------------------


def _openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A throwaway CA and a server certificate for 127.0.0.1 and extender.test (openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not available to generate a test CA")
    d = tmp_path_factory.mktemp("pki")
    (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:extender.test\n"
                               "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                               "extendedKeyUsage=serverAuth\n")
    for name in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.crt",
                 "-days", "2", "-subj", f"/CN=kwhatif test {name}", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=extender.test", cwd=d)
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "2", "-extfile", "san.cnf", cwd=d)
    return d


@pytest.fixture
def https_server(servers, pki):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / "server.crt", pki / "server.key")
    return servers(ctx).on("filter", keep("n1"))


def test_https_with_a_ca_file(https_server, pki):
    result = run([cfg(https_server, filterVerb="filter", enableHTTPS=True, tlsConfig={"caFile": str(pki / "ca.crt")})])
    assert result.feasible == ["n2"]


def test_https_with_ca_data_and_server_name(https_server, pki):
    ca_data = base64.b64encode((pki / "ca.crt").read_bytes()).decode()
    result = run([cfg(https_server, filterVerb="filter", tlsConfig={"caData": ca_data, "serverName": "extender.test"})])
    assert result.feasible == ["n2"]


def test_https_without_a_ca_is_not_verified_when_enable_https(https_server):
    """makeTransport: enableHTTPS without caFile/caData sets Insecure."""
    result = run([cfg(https_server, filterVerb="filter", enableHTTPS=True)])
    assert result.feasible == ["n2"]


def test_https_with_the_wrong_ca_fails_verification(https_server, pki):
    extender = cfg(https_server, filterVerb="filter", enableHTTPS=True, tlsConfig={"caFile": str(pki / "other-ca.crt")})
    with pytest.raises(KwhatifError) as info:
        run([extender])
    assert str(info.value) == (f'Post "{https_server.url}/filter": tls: failed to verify certificate: '
                               "x509: certificate signed by unknown authority")


def test_ca_with_insecure_is_refused(https_server, pki):
    with pytest.raises(KwhatifError, match="specifying a root certificates file with the insecure flag is not allowed"):
        build_extenders([cfg(https_server, tlsConfig={"caFile": str(pki / "ca.crt"), "insecure": True})])


# --- decoding answers as Go's encoding/json does ------------------------------------------------------


def test_field_names_match_case_insensitively_and_trailing_bytes_are_ignored():
    answer = decode_filter_result(b'{"nodenames": ["a"], "failednodes": {"b": "no"}} trailing garbage')
    assert answer.node_names == ["a"] and answer.failed == {"b": "no"}
    assert decode_host_priority_list(b'[{"host": "a", "SCORE": 7}]') == [("a", 7)]
    assert decode_filter_result(b"null").node_names is None


@pytest.mark.parametrize("body, message", [
    (b"", "EOF"),
    (b"   \n", "EOF"),
    (b'{"NodeNames": ["a"', "unexpected EOF"),
    (b"{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
    (b"[1, 2 3]", "invalid character '3' after array element"),
    (b'{"a": tru}', "invalid character '}' in literal true (expecting 'e')"),
    (b'{"a": 01}', "invalid character '1' after object key:value pair"),
    (b'{"a": 1.}', "invalid character '}' after decimal point in numeric literal"),
    (b'{"a": "\\q"}', "invalid character 'q' in string escape code"),
    (b'{"a": "x\x01"}', "invalid character '\\x01' in string literal"),
    (b"[1, 2]", "json: cannot unmarshal array into Go value of type v1.ExtenderFilterResult"),
    (b'{"Error": 5}', "json: cannot unmarshal number into Go struct field ExtenderFilterResult.Error of type string"),
    (b'{"Nodes": {"items": [1]}}', "json: cannot unmarshal number into Go struct field NodeList.Nodes.items of "
                                   "type v1.Node"),
    (b'{"NodeNames": "a"}', "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames "
                            "of type []string"),
])
def test_filter_answer_decoding_errors(body, message):
    with pytest.raises(JSONError) as info:
        decode_filter_result(body)
    assert str(info.value) == message


@pytest.mark.parametrize("body, message", [
    (b'{"a": 1}', "json: cannot unmarshal object into Go value of type v1.HostPriorityList"),
    (b'[{"Host": "a", "Score": 1.5}]', "json: cannot unmarshal number 1.5 into Go struct field HostPriority.Score "
                                       "of type int64"),
    (b'[{"Host": "a", "Score": 9223372036854775808}]', "json: cannot unmarshal number 9223372036854775808 into Go "
                                                      "struct field HostPriority.Score of type int64"),
    (b'[{"Host": "a", "Score": "5"}]', "json: cannot unmarshal string into Go struct field HostPriority.Score of "
                                       "type int64"),
    (b'["a"]', "json: cannot unmarshal string into Go value of type v1.HostPriority"),
])
def test_prioritize_answer_decoding_errors(body, message):
    with pytest.raises(JSONError) as info:
        decode_host_priority_list(body)
    assert str(info.value) == message


def test_preemption_answer_decoding():
    assert decode_preemption_result(b'{"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "u"}], '
                                    b'"NumPDBViolations": 2}}}') == {"n1": (["u"], 2)}
    with pytest.raises(JSONError, match="Go struct field MetaPod.NodeNameToMetaVictims.Pods.UID of type string"):
        decode_preemption_result(b'{"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": 1}]}}}')
