"""`./hpcforge diff`: what a change of the stack will do to the running site, and afterwards whether it did.

base.py          the two states: the head (this working tree's program) and the base (a git ref run by its own
                 program, a `pulumi stack export` of what is deployed, a saved `offline preview --json` recording,
                 or a saved `offline render` folder)
stack_export.py  a `pulumi stack export` file as a base
plan.py          the engine's plan of the change: create / update / replace / delete per resource, with the fields
                 that changed, what forces a replacement, and what the operators or Pulumi refuse
impact.py        what the operators and daemons will do with the plan: severity, blast radius, rollback
verdicts.py      the report as data (the JSON of report.schema.json): summary, verdicts, risks, counts, evidence ids
naming.py        how the report names resources, slurm.conf changes and entities, with what changed
report.py        the report as text or markdown: summary first, details after, evidence legend at the end
verify.py        `--verify`: each predicted effect seen, not seen or unpredicted after the deploy
command.py       the command and its exit status (the gate)
"""
