"""Policy rules as plain typed functions, one module per family (see docs/policies.md).

Each family module exports `RULES`; policies/families.py gathers them per pack, the packs under policies/<pack>/
only assemble them (through policies/framework.py) and the unit tests call them directly.
"""
