"""kwhatif benchmarks: load, place and preempt on synthetic clusters of 100, 1,000 and 5,000 nodes.

    python benchmarks/run.py                      # all sizes, 3 runs each, prints a markdown table
    python benchmarks/run.py --sizes 100,1000 --repeats 5
    python benchmarks/run.py --readme             # also writes the table into benchmarks/README.md
    python benchmarks/run.py --profile preempt --sizes 5000   # cProfile of one measurement

Clusters come from benchmarks/generate.py (seeded, cached in --workdir). Every measurement runs in a
fresh subprocess, so its peak RSS (``wait4`` rusage) is its own:

- load dump / load snapshot file: ``whatif.load_cluster`` (parse, and for a dump API defaulting); the
  snapshot file is written with ``kwhatif snapshot --from`` (its rows are skipped when kwhatif has no
  snapshot_file module). Then building the scheduler's per-node Snapshot (NodeInfos) from the cluster
  the evaluations use (the snapshot file's, else the dump's); the peak RSS of these rows is the process's.
- place / preempt: the whole evaluation after load (``whatif.place_pod`` on the built Snapshot: pod
  defaulting and admission, framework, PreFilter, Filter, PostFilter/preemption, PreScore, Score), timed
  ``--repeats`` times in one process after one untimed warm-up (plugin imports); every repeat must give
  the identical result.
- render: the place table of the plain pod with a row for every node (``--all-nodes``), drawn piped
  (plain text at its natural width) and on a 160-column colour terminal, timed after the evaluation.
- whole commands: ``kwhatif place POD --cluster SNAPSHOT`` (-o json and the default table),
  ``kwhatif preempt POD --explain`` and ``kwhatif --help``, wall time of the CLI process.

Before timing, each size's answers are checked against an independent computation on the generated
data (plain resource/taint arithmetic, anti-affinity and zone skew by counting pods), and the snapshot
must give the same results as the dump.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402

PODS = ("plain", "affinity-spread", "preempt")
TARGETS = {  # at 5,000 nodes, seconds (issue 8)
    "load-snapshot": 3.0, "plain": 0.3, "affinity-spread": 1.0, "preempt": 3.0, "cli-place-json": 4.0,
    "cli-place-table": 4.0, "help": 0.3, "render-all-nodes": 0.5, "render-all-nodes-terminal": 0.5,
}
LABELS = {
    "load-dump": "load dump (JSON parse + defaulting)",
    "load-snapshot": "load snapshot file",
    "build": "build the scheduler snapshot (NodeInfos)",
    "plain": "place: plain pod (evaluation after load)",
    "affinity-spread": "place: required anti-affinity + zone spread",
    "preempt": "preempt: high-priority pod (evaluation after load)",
    "render-all-nodes": "render the place table, every node (`--all-nodes`, piped)",
    "render-all-nodes-terminal": "render the place table, every node (160-column colour terminal)",
    "cli-place-json": "`kwhatif place plain --cluster snap -o json`",
    "cli-place-table": "`kwhatif place plain --cluster snap` (table)",
    "cli-preempt-explain": "`kwhatif preempt --explain --cluster snap` (table)",
    "help": "`kwhatif --help`",
}
MEMORY_TARGET_MB = 2048


def has_snapshot_support() -> bool:
    return (REPO / "kwhatif" / "snapshot_file.py").exists()


def kwhatif_command() -> list[str]:
    script = Path(sys.executable).parent / "kwhatif"
    if script.exists():
        return [str(script)]
    found = shutil.which("kwhatif")
    return [found] if found else [sys.executable, "-m", "kwhatif"]


# --- data ---------------------------------------------------------------------------------------

def dataset(workdir: Path, nodes: int, pods_per_node: int, seed: int) -> tuple[Path, Path | None]:
    """The dump (and snapshot) for one size, generated once per version of generate.py."""
    version = hashlib.sha256((HERE / "generate.py").read_bytes()).hexdigest()[:8]
    dump = workdir / f"cluster-{nodes}n-{pods_per_node}p-s{seed}-{version}.json"
    if not dump.exists():
        print(f"generating {dump.name} ...", file=sys.stderr)
        tmp = dump.with_name(dump.name + ".tmp.json")
        generate.write(nodes, pods_per_node, seed, tmp)
        for kind, path in generate.pod_paths(tmp).items():
            path.rename(generate.pod_paths(dump)[kind])
        tmp.rename(dump)
    snap = None
    if has_snapshot_support():
        snap = dump.with_suffix(".kwi.json.gz")
        if not snap.exists():
            print(f"writing snapshot {snap.name} ...", file=sys.stderr)
            tmp = snap.with_name(snap.name + ".tmp.kwi.json.gz")
            subprocess.run(kwhatif_command() + ["snapshot", "--from", str(dump), "-o", str(tmp)], check=True,
                           stdout=subprocess.DEVNULL)
            tmp.rename(snap)
    return dump, snap


# --- the independent check ----------------------------------------------------------------------

_SUFFIX = {"m": Fraction(1, 1000), "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "": 1}


def quantity(text) -> Fraction:
    """The few quantity forms generate.py writes (plain, m, Ki, Mi, Gi)."""
    text = str(text)
    for suffix in ("Ki", "Mi", "Gi", "m", ""):
        if text.endswith(suffix) and text[:len(text) - len(suffix)].isdigit():
            return int(text[:len(text) - len(suffix)]) * Fraction(_SUFFIX[suffix])
    raise ValueError(f"generate.py does not write quantities like {text!r}")


def requests(pod: dict) -> dict[str, Fraction]:
    """Sum of container requests, a request defaulting to its limit (no init containers are generated)."""
    out: dict[str, Fraction] = {}
    for c in pod["spec"]["containers"]:
        res = c.get("resources") or {}
        merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        for name, value in merged.items():
            out[name] = out.get(name, 0) + quantity(value)
    return out


class Expected:
    """What the generated data says about the benchmark pods, computed without kwhatif."""

    def __init__(self, items: list[dict]) -> None:
        self.nodes = [o for o in items if o["kind"] == "Node"]
        pods = [o for o in items if o["kind"] == "Pod"]
        self.classes = {o["metadata"]["name"]: o["value"] for o in items if o["kind"] == "PriorityClass"}
        self.classes.update({"system-node-critical": 2000001000, "system-cluster-critical": 2000000000})
        self.default_priority = next(o["value"] for o in items if o["kind"] == "PriorityClass" and o.get("globalDefault"))
        self.used = {n["metadata"]["name"]: {"cpu": Fraction(0), "memory": Fraction(0), "pods": 0} for n in self.nodes}
        self.pods_on: dict[str, list[dict]] = {name: [] for name in self.used}
        self.nominated: dict[str, list[dict]] = {}
        for p in pods:
            node = p["spec"].get("nodeName")
            if node:
                self.pods_on[node].append(p)
                used, req = self.used[node], requests(p)
                used["cpu"] += req.get("cpu", 0)
                used["memory"] += req.get("memory", 0)
                used["pods"] += 1
            elif p["status"].get("nominatedNodeName"):
                self.nominated.setdefault(p["status"]["nominatedNodeName"], []).append(p)

    def priority(self, pod: dict) -> int:
        name = pod["spec"].get("priorityClassName")
        return self.classes[name] if name else self.default_priority

    def fits(self, pod: dict, node: dict, removed=()) -> bool:
        """Taints, cordon, cpu, memory and pod count, with equal-or-higher-priority nominated pods added."""
        if node["spec"].get("unschedulable"):
            return False
        if any(t["effect"] in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints") or []):
            return False  # the benchmark pods tolerate only not-ready/unreachable
        name = node["metadata"]["name"]
        alloc = node["status"]["allocatable"]
        used = dict(self.used[name])
        for victim in removed:
            req = requests(victim)
            used["cpu"] -= req.get("cpu", 0)
            used["memory"] -= req.get("memory", 0)
            used["pods"] -= 1
        for nominated in self.nominated.get(name, []):
            if self.priority(nominated) >= self.priority(pod):
                req = requests(nominated)
                used["cpu"] += req.get("cpu", 0)
                used["memory"] += req.get("memory", 0)
                used["pods"] += 1
        req = requests(pod)
        return (used["pods"] + 1 <= int(alloc["pods"])
                and req["cpu"] <= quantity(alloc["cpu"]) - used["cpu"]
                and req["memory"] <= quantity(alloc["memory"]) - used["memory"])

    def plain(self, pod: dict) -> set[str]:
        return {n["metadata"]["name"] for n in self.nodes if self.fits(pod, n)}

    def affinity_spread(self, pod: dict) -> set[str]:
        """Resources, no bench-web pod on the node (hostname anti-affinity both ways), zone skew <= 1."""
        def is_web(p: dict) -> bool:
            return p["metadata"]["namespace"] == generate.BENCH_NS and p["metadata"]["labels"].get("app") == generate.BENCH_APP

        zone_of = {n["metadata"]["name"]: n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in self.nodes}
        per_zone = {z: 0 for z in zone_of.values()}
        for name, pods in self.pods_on.items():
            per_zone[zone_of[name]] += sum(1 for p in pods if is_web(p))
        least = min(per_zone.values())
        ok_zones = {z for z, n in per_zone.items() if n + 1 - least <= 1}
        return {name for name in self.plain(pod) if zone_of[name] in ok_zones
                and not any(is_web(p) for p in self.pods_on[name])}

    def check_preemption(self, pod: dict, outcome: dict) -> list[str]:
        """The nominated node's victims are lower-priority pods of that node whose eviction makes room."""
        node_name = outcome.get("nominatedNode")
        if not node_name:
            return [f"preempt: no node nominated ({outcome.get('message')})"]
        victims = set(outcome["candidates"][node_name]["victims"])
        on_node = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in self.pods_on[node_name]}
        problems = [f"preempt: victim {v} is not on {node_name}" for v in victims if v not in on_node]
        problems += [f"preempt: victim {v} has priority >= the pod's" for v in victims
                     if v in on_node and self.priority(on_node[v]) >= self.priority(pod)]
        node = next(n for n in self.nodes if n["metadata"]["name"] == node_name)
        if not self.fits(pod, node, [on_node[v] for v in victims if v in on_node]):
            problems.append(f"preempt: evicting {len(victims)} pods from {node_name} does not make room")
        return problems


def check(dump: Path, snap: Path | None) -> list[str]:
    """Compare kwhatif's answers with the independent computation (and snapshot with dump)."""
    from kwhatif import whatif

    items = orjson.loads(dump.read_bytes())["items"]
    expected = Expected(items)
    del items
    pods = {kind: orjson.loads(path.read_bytes()) for kind, path in generate.pod_paths(dump).items()}
    cluster = whatif.load_cluster(str(dump))
    results = {kind: whatif.place_pod(pods[kind], kind, cluster).to_dict() for kind in PODS}
    problems = []
    for kind, want in (("plain", expected.plain(pods["plain"])),
                       ("affinity-spread", expected.affinity_spread(pods["affinity-spread"])),
                       ("preempt", expected.plain(pods["preempt"]))):
        got = set(results[kind]["feasible"])
        if got != want:
            problems.append(f"{kind}: feasible nodes differ: {len(want)} expected, {len(got)} found; "
                            f"only expected {sorted(want - got)[:5]}, only found {sorted(got - want)[:5]}")
        if kind != "preempt" and not want:
            problems.append(f"{kind}: the generated cluster leaves no feasible node (generator bug)")
    if expected.plain(pods["preempt"]):
        problems.append("preempt: the pod fits without evictions (generator bug)")
    if results["preempt"]["preemption"] is None:
        problems.append("preempt: no preemption outcome")
    else:
        problems += expected.check_preemption(pods["preempt"], results["preempt"]["preemption"])
    if snap is not None:
        del cluster
        from_snap = whatif.load_cluster(str(snap))
        for kind in PODS:
            again = whatif.place_pod(pods[kind], kind, from_snap).to_dict()
            again["warnings"], results[kind]["warnings"] = [], []  # a snapshot notes its missing lease
            if again != results[kind]:
                problems.append(f"{kind}: the snapshot gives a different result than the dump")
    return problems


# --- workers (each in its own process) ----------------------------------------------------------

def build(path: str):
    from kwhatif import whatif
    from kwhatif.state.snapshot import Snapshot

    cluster = whatif.load_cluster(path)
    return cluster, Snapshot(cluster)


def worker_load(path: str) -> dict:
    from kwhatif import whatif
    from kwhatif.state.snapshot import Snapshot

    started = time.perf_counter()
    cluster = whatif.load_cluster(path)
    gc.collect(0)  # the young-generation collection loading may leave due: the next allocation would pay it
    loaded = time.perf_counter()
    Snapshot(cluster)
    return {"times": [loaded - started], "build": [time.perf_counter() - loaded]}


def worker_eval(path: str, pod_path: str, repeats: int) -> dict:
    from kwhatif import whatif

    cluster, snapshot = build(path)
    raw = orjson.loads(Path(pod_path).read_bytes())
    whatif.place_pod(raw, pod_path, cluster, snapshot=snapshot)  # warm-up: imports the plugin modules
    times, digests = [], set()
    for _ in range(repeats):
        started = time.perf_counter()
        result = whatif.place_pod(raw, pod_path, cluster, snapshot=snapshot)
        times.append(time.perf_counter() - started)
        digests.add(hashlib.sha256(orjson.dumps(result.to_dict(), option=orjson.OPT_SORT_KEYS)).hexdigest())
    if len(digests) != 1:
        raise SystemExit(f"{pod_path}: repeated evaluations on one snapshot gave different results")
    return {"times": times}


def worker_render(path: str, pod_path: str, repeats: int) -> dict:
    """The place table with every node, piped and on a terminal: the cost of drawing, not of evaluating."""
    import io

    from kwhatif import whatif
    from kwhatif.render.env import OutputEnv
    from kwhatif.render.table import render_place

    cluster, snapshot = build(path)
    result = whatif.place_pod(orjson.loads(Path(pod_path).read_bytes()), pod_path, cluster, snapshot=snapshot)
    out: dict[str, list[float]] = {}
    for key, env in (("piped", OutputEnv(width=None)), ("terminal", OutputEnv(width=160, colour=True))):
        out[key] = []
        for _ in range(repeats + 1):  # the first draws once untimed (imports)
            sink = io.StringIO()
            started = time.perf_counter()
            render_place(result, all_nodes=True, console=OutputEnv(sink, None, env.width, env.colour).console())
            out[key].append(time.perf_counter() - started)
            if sink.getvalue().count("\n") < len(result.node_names):
                raise SystemExit("render: fewer lines than nodes with --all-nodes")
        out[key] = out[key][1:]
    return out


def worker(args: argparse.Namespace) -> None:
    if args.worker == "load":
        out = worker_load(args.cluster)
    elif args.worker == "render":
        out = worker_render(args.cluster, args.pod, args.repeats)
    elif args.worker == "check":
        out = {"problems": check(Path(args.cluster), Path(args.snapshot) if args.snapshot else None)}
    else:
        out = worker_eval(args.cluster, args.pod, args.repeats)
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(orjson.dumps(out).decode() + "\n")


def run_child(cmd: list[str], capture: bool = True) -> tuple[float, float, bytes]:
    """Wall time, peak RSS (MB, from wait4) and stdout of one child process."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=err, cwd=REPO)
        stdout = proc.stdout.read() if capture else b""
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if capture:
            proc.stdout.close()
        if code not in (0, 1):  # kwhatif exits 1 when the pod does not fit
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err.read().decode(errors='replace')[-3000:]}")
    return elapsed, usage.ru_maxrss / 1024, stdout


def run_worker(*args: str) -> dict:
    _, _, stdout = run_child([sys.executable, __file__, "--worker", *args])
    return orjson.loads(stdout.splitlines()[-1])


def timed_cli(cmd: list[str], repeats: int) -> dict:
    runs = [run_child(cmd, capture=False) for _ in range(repeats)]
    return {"times": [t for t, _, _ in runs], "maxrss_mb": max(rss for _, rss, _ in runs)}


# --- the driver ---------------------------------------------------------------------------------

def measure(size: int, args: argparse.Namespace) -> dict[str, dict]:
    dump, snap = dataset(args.workdir, size, args.pods_per_node, args.seed)
    pods = generate.pod_paths(dump)
    if not args.no_check:
        problems = run_worker("check", "--cluster", str(dump), *(["--snapshot", str(snap)] if snap else []))["problems"]
        if problems:
            raise SystemExit(f"{size} nodes: results differ from the independent check:\n  " + "\n  ".join(problems))
        print(f"{size} nodes: answers checked", file=sys.stderr)
    source = snap or dump
    out: dict[str, dict] = {}
    for key, path in (("load-dump", dump), ("load-snapshot", snap)):
        if path is None:
            continue
        loads = [run_worker("load", "--cluster", str(path)) for _ in range(args.repeats)]
        out[key] = {"times": [t for r in loads for t in r["times"]], "maxrss_mb": max(r["maxrss_mb"] for r in loads)}
        if path == source:  # the NodeInfos built from what the evaluations load
            out["build"] = {"times": [t for r in loads for t in r["build"]], "maxrss_mb": out[key]["maxrss_mb"]}
    for kind in PODS:
        out[kind] = run_worker("eval", "--cluster", str(source), "--pod", str(pods[kind]), "--repeats", str(args.repeats))
    drawn = run_worker("render", "--cluster", str(source), "--pod", str(pods["plain"]), "--repeats", str(args.repeats))
    out["render-all-nodes"] = {"times": drawn["piped"], "maxrss_mb": drawn["maxrss_mb"]}
    out["render-all-nodes-terminal"] = {"times": drawn["terminal"], "maxrss_mb": drawn["maxrss_mb"]}
    kw = kwhatif_command()
    out["cli-place-json"] = timed_cli(kw + ["place", str(pods["plain"]), "--cluster", str(source), "-o", "json"],
                                      args.repeats)
    out["cli-place-table"] = timed_cli(kw + ["place", str(pods["plain"]), "--cluster", str(source)], args.repeats)
    out["cli-preempt-explain"] = timed_cli(kw + ["preempt", str(pods["preempt"]), "--cluster", str(source),
                                                 "--explain"], args.repeats)
    print(f"{size} nodes: measured", file=sys.stderr)
    return out


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (`nproc` {len(os.sched_getaffinity(0))}), {model}, Python {platform.python_version()}"


def fmt(entry: dict | None) -> str:
    if entry is None:
        return "–"
    return f"{statistics.median(entry['times']):.3f} s · {entry['maxrss_mb']:.0f} MB"


def table(results: dict[int, dict[str, dict]], help_entry: dict, sizes: list[int], checked: bool) -> str:
    lo, hi = min(sizes), max(sizes)
    ratios = [(hi, lo)] + ([(hi, sizes[-2])] if len(sizes) > 2 else [])
    head = (["measurement"] + [f"{s:,} nodes" for s in sizes] + [f"{a:,}/{b:,}" for a, b in ratios]
            + ["target at 5,000"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, label in LABELS.items():
        if key == "help":
            entries = {s: help_entry for s in sizes}
        else:
            entries = {s: results[s].get(key) for s in sizes}
        if all(e is None for e in entries.values()):
            continue
        ratio_cells = []
        for a, b in ratios:
            if entries[a] and entries[b] and key != "help":
                ratio_cells.append(f"{statistics.median(entries[a]['times']) / statistics.median(entries[b]['times']):.1f}x")
            else:
                ratio_cells.append("–")
        target = TARGETS.get(key)
        verdict = "–" if target is None else f"< {target} s"
        if target is not None and entries[hi] and hi == 5000:
            verdict += " ✓" if statistics.median(entries[hi]["times"]) < target else " ✗"
        lines.append("| " + " | ".join([label] + [fmt(entries[s]) for s in sizes] + ratio_cells + [verdict]) + " |")
    peak = max(e["maxrss_mb"] for r in results.values() for e in r.values())
    lines.append("")
    lines.append(f"Cells: median wall time of the runs · peak RSS of that process. Peak RSS overall {peak:.0f} MB "
                 f"(target < {MEMORY_TARGET_MB} MB {'✓' if peak < MEMORY_TARGET_MB else '✗'}); "
                 f"linear growth target: 5,000/100 at most 55x.")
    if checked:
        lines.append("At every size the answers were checked against an independent computation on the generated "
                     "data, and the snapshot gave the same results as the dump.")
    return "\n".join(lines)


def write_readme(text: str) -> None:
    readme = HERE / "README.md"
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    content = readme.read_text() if readme.exists() else f"# Benchmarks\n\n{begin}\n{end}\n"
    if begin not in content:
        content += f"\n{begin}\n{end}\n"
    head, rest = content.split(begin, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


def profile(args: argparse.Namespace) -> None:
    import cProfile
    import pstats

    size = args.sizes[-1]
    dump, snap = dataset(args.workdir, size, args.pods_per_node, args.seed)
    source = str(snap or dump)
    if args.profile in ("load-dump", "load-snapshot"):
        target = str(dump) if args.profile == "load-dump" else source
        cProfile.runctx("build(target)", globals(), {"target": target}, "/tmp/kwhatif-bench.prof")
    else:
        from kwhatif import whatif

        cluster, snapshot = build(source)
        pod_path = generate.pod_paths(dump)[args.profile]
        raw = orjson.loads(pod_path.read_bytes())
        whatif.place_pod(raw, str(pod_path), cluster, snapshot=snapshot)  # warm: plugin imports
        cProfile.runctx("whatif.place_pod(raw, p, cluster, snapshot=snapshot)", globals(),
                        {"whatif": whatif, "raw": raw, "p": str(pod_path), "cluster": cluster, "snapshot": snapshot},
                        "/tmp/kwhatif-bench.prof")
    stats = pstats.Stats("/tmp/kwhatif-bench.prof")
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000,5000", help="node counts, comma-separated")
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement (the table shows medians)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "kwhatif-bench")
    ap.add_argument("--no-check", action="store_true", help="skip the answer check")
    ap.add_argument("--readme", action="store_true", help="write the table into benchmarks/README.md")
    ap.add_argument("--profile", choices=("load-dump", "load-snapshot") + PODS,
                    help="cProfile one measurement at the largest size instead of benchmarking")
    ap.add_argument("--top", type=int, default=40, help="rows of the profile to print")
    ap.add_argument("--worker", choices=("load", "eval", "check", "render"), help=argparse.SUPPRESS)
    ap.add_argument("--cluster", help=argparse.SUPPRESS)
    ap.add_argument("--snapshot", help=argparse.SUPPRESS)
    ap.add_argument("--pod", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args)
        return
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.profile:
        profile(args)
        return
    results = {size: measure(size, args) for size in args.sizes}
    help_entry = timed_cli(kwhatif_command() + ["--help"], max(args.repeats, 5))
    text = (f"{args.pods_per_node} pods per node, seed {args.seed}, {args.repeats} runs per cell; "
            f"machine: {machine()}.\n\n" + table(results, help_entry, args.sizes, not args.no_check))
    print(text)
    if args.readme:
        write_readme(text)


if __name__ == "__main__":
    main()
