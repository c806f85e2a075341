"""Scheduler extenders over HTTP, as kube-scheduler v1.34 calls them (pkg/scheduler/extender.go).

``extender.build_extenders`` turns the ``extenders`` entries of a KubeSchedulerConfiguration into
``HTTPExtender`` objects (buildExtenders / NewHTTPExtender: TLS, the 5s default timeout, ignorable
extenders moved to the tail; validation and NodeResourcesFit's ignoredResources are done where the
config is loaded, kwhatif/framework/scheduler_config/, as buildExtenders does them before the
frameworks are built). The pipeline (kwhatif/scheduler.py and the preemption evaluator) calls
``filter``, ``prioritize`` and ``process_preemption`` with real HTTP requests that carry the same JSON
kube-scheduler sends (k8s.io/kube-scheduler/extender/v1, Go field names). Answers are decoded the way
Go's encoding/json decodes them (case-insensitive field names, the first value of the body, the first
type error), so an extender that kube-scheduler rejects is rejected here with the same words.

Modules: ``config`` (an entry decoded), ``tls``, ``transport`` (HTTP), ``gojson`` and ``answers``
(decoding the replies), ``extender`` (the verbs), ``errors``.

kwhatif is read-only: the bind verb is never called (the scheduler reports which extender would
have bound the pod).
"""
