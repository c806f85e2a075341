"""The one list of shared conformance cases that fail until the open issue covering them lands.

Each entry is strict: a case that starts passing fails the run, so its mark is deleted in the commit
that fixes it. Nothing else in the suite is skipped or expected to fail.
"""

from __future__ import annotations

#: case name (file stem; v1.35/STEM or v1.36/STEM for ../shared/conformance/v1.35, v1.36) -> title of the open issue that makes it pass
KNOWN_FAILURES: dict[str, str] = {
}


SUGGEST = '"What would make it fit": counterfactuals, each proven by re-running the scheduler'

#: non-fitting case -> what blocks it that `place --suggest` does not change yet (tests/test_suggest.py)
NO_SUGGESTION_YET: dict[str, str] = {
}
