"""Plugin args types, one module per configurable plugin, named after it; the registry
(kwhatif/framework/registry.py) names each plugin's type. See ``base`` for what a type holds."""
