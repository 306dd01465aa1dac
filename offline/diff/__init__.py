"""`./hpcforge diff`: what a change of the stack will do to the running site.

base.py   the two states: the head (this working tree's program) and the base (a git ref run by its own
          program, a saved `offline preview --json` recording, or a saved `offline render` folder)
plan.py   the engine's plan of the change: create / update / replace / delete per resource, with the fields
          that changed, what forces a replacement, and what the operators or Pulumi refuse
impact.py what the operators and daemons will do with the plan: severity, blast radius, rollback
report.py the report (text or markdown): summary first, details after
command.py the command and its exit status (the gate)
"""
