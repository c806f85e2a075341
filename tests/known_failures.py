"""The one list of shared conformance cases that fail until the open issue covering them lands.

Each entry is strict: a case that starts passing fails the run, so its mark is deleted in the commit
that fixes it. Nothing else in the suite is skipped or expected to fail.
"""

from __future__ import annotations

V1_36 = "kube-scheduler v1.36 exact, proven by the real v1.36.2 framework; the default release; v1.37 preview built on it"

#: case name (file stem; v1.35/STEM or v1.36/STEM for ../shared/conformance/v1.35, v1.36) -> title of the open issue that makes it pass
KNOWN_FAILURES: dict[str, str] = {
    "v1.36/gen-5101-node-declared-features": V1_36,
    "v1.36/gen-5102-node-declared-features": V1_36,
    "v1.36/gen-5103-node-declared-features": V1_36,
    "v1.36/gen-5104-node-declared-features": V1_36,
    "v1.36/gen-5105-node-declared-features": V1_36,
    "v1.36/gen-5106-node-declared-features": V1_36,
}


SUGGEST = '"What would make it fit": counterfactuals, each proven by re-running the scheduler'

#: non-fitting case -> what blocks it that `place --suggest` does not change yet (tests/test_suggest.py)
NO_SUGGESTION_YET: dict[str, str] = {
}
