"""The layers of README's Layout, enforced: import-linter's contracts in pyproject.toml hold for
kwhatif, and they do catch the violations issue 12 found, fed to them in a copy of the package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"

# Imports the layering forbids, each added to a module of a copy of the package: (module file, line,
# what the report then says).
BAD_IMPORTS = [
    # scheduler <-> preemption: preemption is below the scheduler
    ("preemption.py", "import kwhatif.scheduler", "kwhatif.preemption -> kwhatif.scheduler"),
    # state reading files through the loader
    ("state/cluster.py", "import kwhatif.loader", "kwhatif.state.cluster -> kwhatif.loader"),
    # the scheduler-config loader importing the service layer
    ("framework/scheduler_config/loader.py", "import kwhatif.whatif",
     "kwhatif.framework.scheduler_config.loader -> kwhatif.whatif"),
    # a plugin importing the runtime
    ("plugins/pod_topology_spread.py", "import kwhatif.framework.runtime",
     "kwhatif.plugins.pod_topology_spread -> kwhatif.framework.runtime"),
    # a plugin importing rendering and the CLI
    ("plugins/node_ports.py", "import kwhatif.render.table", "kwhatif.plugins.node_ports -> kwhatif.render.table"),
    ("plugins/node_name.py", "import kwhatif.cli.common", "kwhatif.plugins.node_name -> kwhatif.cli.common"),
    # the plugin API importing the runtime
    ("framework/interface.py", "import kwhatif.framework.runtime",
     "kwhatif.framework.interface -> kwhatif.framework.runtime"),
    # a circle in the API modules (issue 40 found labels -> validation -> workload_validation -> labels):
    # the label rules reading the validation of objects, which reads them
    ("api/names.py", "import kwhatif.api.validation", "- .validation -> .names"),
]


def lint(package_parent: Path, config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([sys.executable, "-c", LINT, "--config", str(config), "--no-cache"],
                          cwd=package_parent, env=env, capture_output=True, text=True, timeout=60)


def test_kwhatif_keeps_its_layers():
    run = lint(ROOT, ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 kept, 0 broken" in run.stdout


def test_contracts_catch_each_bad_import(tmp_path):
    shutil.copytree(ROOT / "kwhatif", tmp_path / "kwhatif", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for module, line, _ in BAD_IMPORTS:
        path = tmp_path / "kwhatif" / module
        path.write_text(path.read_text() + f"\n{line}\n")
    run = lint(tmp_path, tmp_path / "pyproject.toml")
    report = run.stdout
    assert run.returncode == 1, report + run.stderr
    assert "layers import only downward BROKEN" in report
    assert "the plugin API imports nothing of the framework above it BROKEN" in report
    assert "plugins never import the runtime, loaders, rendering or the CLI BROKEN" in report
    assert "the API modules import one another without a circle BROKEN" in report
    missing = [chain for _, _, chain in BAD_IMPORTS if chain not in report]
    assert not missing, report
