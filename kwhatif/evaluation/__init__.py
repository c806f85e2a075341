"""How a scheduling attempt gets the Filter verdicts and the Scores of nodes: one interface
(``NodeEvaluation``), two implementations, tested against each other (cluster-autoscaler's
ClusterSnapshot pattern: one interface, a plain store and a fast one proven equal).

- ``Fresh`` (kwhatif.evaluation.fresh) keeps nothing: each node is filtered and scored by the profile's
  plugins, one node at a time, as upstream's findNodesThatPassFilters and prioritizeNodes do. It is the
  reference.
- ``Memo`` (kwhatif.evaluation.memo) gives the same answers faster: the verdicts and raw scores of nodes
  that did not change since the last attempt are kept (state.node_memo), and plugins' bulk (numpy) forms
  are used.

The implementation is chosen in one place, ``evaluation_for``: the ``KWHATIF_EVALUATION`` environment
variable (``fresh`` or ``memo``, the default), so that any command or test corpus can be answered by
the reference.
"""

from __future__ import annotations

import os

from kwhatif.errors import InputError
from kwhatif.evaluation.fresh import Fresh
from kwhatif.evaluation.interface import NodeEvaluation
from kwhatif.evaluation.memo import Memo

EVALUATION_ENV = "KWHATIF_EVALUATION"
IMPLEMENTATIONS: dict[str, type] = {"fresh": Fresh, "memo": Memo}

__all__ = ["EVALUATION_ENV", "IMPLEMENTATIONS", "Fresh", "Memo", "NodeEvaluation", "evaluation_for", "selected"]


def selected() -> str:
    """The implementation the environment asks for (``KWHATIF_EVALUATION``), ``memo`` when unset."""
    name = os.environ.get(EVALUATION_ENV, "").strip().lower() or "memo"
    if name not in IMPLEMENTATIONS:
        raise InputError(f"{EVALUATION_ENV}={name!r}: expected one of {', '.join(sorted(IMPLEMENTATIONS))}")
    return name


def keeps_values(name: str | None = None) -> bool:
    """Whether the implementation ``name`` (the selected one when None) keeps per-node values between
    attempts, so that an engine running a sequence should give its frameworks a NodeMemo."""
    return (name or selected()) == "memo"


def evaluation_for(framework, name: str | None = None) -> NodeEvaluation:
    """The implementation ``name`` (the selected one when None) over ``framework``."""
    return IMPLEMENTATIONS[name or selected()](framework)
