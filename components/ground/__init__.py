"""Below every layer: the base types of the typed config, the YAML 1.2 reader, inventory references, the platform
core (Kubernetes, delivery, protection), node pools and their GPUs, the bare-metal hosts, and the metadata every
object carries. Nothing here imports a layer or the site."""
