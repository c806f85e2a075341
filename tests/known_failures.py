"""The one list of shared conformance cases that fail until the open issue covering them lands.

Each entry is strict: a case that starts passing fails the run, so its mark is deleted in the commit
that fixes it. Nothing else in the suite is skipped or expected to fail.
"""

from __future__ import annotations

VERSIONS = ("The kube-scheduler people run: v1.34 patches and v1.35 exact, 1.36/1.37 from upstream's text, "
            "chosen from the cluster, and what an upgrade changes")

#: case name (file stem; v1.35/STEM for ../shared/conformance/v1.35) -> title of the open issue that makes it pass
KNOWN_FAILURES: dict[str, str] = {
    **{f"v1.35/{name}": VERSIONS for name in (
        "seq-4201-batching", "seq-4202-batching", "seq-4205-batching", "seq-4209-batching", "seq-4215-batching",
        "seq-4219-batching")},
}


SUGGEST = '"What would make it fit": counterfactuals, each proven by re-running the scheduler'

#: non-fitting case -> what blocks it that `place --suggest` does not change yet (tests/test_suggest.py)
NO_SUGGESTION_YET: dict[str, str] = {
}
