"""One module per kube-scheduler plugin, named after it (NodeResourcesFit -> node_resources_fit)."""
