"""hpcforge components: the typed config, one ComponentResource per layer, renderers and helpers."""
