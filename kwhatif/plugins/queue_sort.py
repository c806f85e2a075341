"""PrioritySort: the queue order (higher priority first, then earlier enqueue). Present so profiles
that name it are valid; a what-if evaluates one pod and has no queue to sort."""

from kwhatif.framework.interface import Plugin


class PrioritySort(Plugin):

    def less(self, a, b) -> bool:
        return a.priority > b.priority
