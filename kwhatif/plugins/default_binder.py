"""DefaultBinder: present so profiles that name it are valid. kwhatif never binds: a what-if only
reports the node the pod would be bound to."""

from kwhatif.framework.interface import Plugin


class DefaultBinder(Plugin):

    def bind(self, state, pod, node_name):
        raise RuntimeError("kwhatif is read-only and never binds pods")
