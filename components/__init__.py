"""hpcforge components: config/ (the readers, the root model, the cross-layer checks), layers/<layer>/ (each layer's
config, pure builders and ComponentResource), k8s/ (Kubernetes helpers the layers share), platform.py (wires them)."""
