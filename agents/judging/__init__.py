"""Judging models: one module per judgement, each with a `nertz` command.

    grid.py          the grid of table formats        nertz judge grid
    curve.py         a run's learning curve            nertz judge curve
    head_to_head.py  agent A against agent B           nertz judge h2h
    agreement.py     same-move agreement of two agents nertz judge agreement
    exploitability.py  a trained best response's margin  nertz exploit
    probe.py         what an agent does at named decisions  nertz probe

Built on the arena (matches on duplicate deals), the statistics, the learned agents and the
training (exploitability's responders); nothing below imports it, only the CLI
(tests/test_house.py LAYERS). Published figures made with these: docs/experiments/results/.
"""
