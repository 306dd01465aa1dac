"""Documentation of hpcforge; `python -m docs.generate` writes the configuration reference."""
