"""The one list of shared conformance cases that fail until the open issue covering them lands.

Each entry is strict: a case that starts passing fails the run, so its mark is deleted in the commit
that fixes it. Nothing else in the suite is skipped or expected to fail.
"""

from __future__ import annotations

ENGINE_V2 = "Scenario engine v2: one scenario state, kube-scheduler's node sampling in every sequence, 10x faster at 5,000 nodes"

#: case name (file stem) -> title of the open issue that makes it pass
KNOWN_FAILURES: dict[str, str] = {
    "seq-0201-large-cluster": ENGINE_V2,
    "seq-0202-large-cluster": ENGINE_V2,
    "seq-0203-large-cluster": ENGINE_V2,
    "seq-0204-large-cluster": ENGINE_V2,
    "seq-0205-large-cluster": ENGINE_V2,
    "seq-0206-large-cluster": ENGINE_V2,
    "seq-0207-large-cluster": ENGINE_V2,
    "seq-0208-large-cluster": ENGINE_V2,
    "seq-0209-large-cluster": ENGINE_V2,
    "seq-0210-large-cluster": ENGINE_V2,
    "seq-0211-large-cluster": ENGINE_V2,
    "seq-0212-large-cluster": ENGINE_V2,
    "seq-0213-large-cluster": ENGINE_V2,
    "seq-0214-large-cluster": ENGINE_V2,
    "seq-0215-large-cluster": ENGINE_V2,
    "seq-0216-large-cluster": ENGINE_V2,
}


SUGGEST = '"What would make it fit": counterfactuals, each proven by re-running the scheduler'

#: non-fitting case -> what blocks it that `place --suggest` does not change yet (tests/test_suggest.py)
NO_SUGGESTION_YET: dict[str, str] = {
}
