"""One folder per layer: config.py (its typed config), layer.py (its ComponentResource) and its pure builders and
renderers (objects.py, slurm_conf.py, ...)."""
