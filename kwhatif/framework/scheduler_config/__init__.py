"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as kube-scheduler v1.34 reads it.

kube-scheduler decodes its config file strictly (unknown and duplicate fields are errors, plugin args
included), applies the v1 defaults (apis/config/v1/defaults.go: profiles merged with the default
MultiPoint set, per-plugin SetDefaults_*Args, leader election), validates it
(apis/config/validation), builds its extenders (managedResources ignoredByScheduler end up in every
profile's NodeResourcesFit ignoredResources) and then one framework per profile, whose construction
rejects unknown plugins, plugins at extension points they do not implement, double registrations, a
profile without exactly one QueueSort or without a Bind plugin, and invalid NodeResourcesFit args.
kwhatif does all of this when loading, so every config kube-scheduler would refuse to start with is
an InputError naming the file and the field, in kube-scheduler's own wording.

Modules, in the order loading runs them: ``decode`` (with its ``schema`` and ``duplicate_keys``), ``defaults``,
``validation`` (plugin args by their types in kwhatif/plugins/args/), ``framework_check``; ``loader``
ties them together.
"""
