"""PrioritySort: the queue order (higher priority first, then the earlier queue timestamp). Its ``less``
is the one comparator of kwhatif's scheduling queue (``kwhatif.queue``)."""

from kwhatif.framework.interface import Plugin


def less(a, b) -> bool:
    """Less(pInfo1, pInfo2): ``a`` goes first. ``a``/``b`` have ``priority`` and a ``timestamp`` whose
    string order is time order."""
    return a.priority > b.priority or (a.priority == b.priority and a.timestamp < b.timestamp)


class PrioritySort(Plugin):

    def less(self, a, b) -> bool:
        return less(a, b)
