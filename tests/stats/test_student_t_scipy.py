"""Why agents/stats/student_t.py stays hand-written now that scipy is required (its module
docstring has the measurement: every published results JSON would change, most cannot be
rerun):
the published figures (docs/experiments/results/*.json: learned_grid and its kin) print
their half-widths and p-values as full-precision floats, and scipy.stats.t gives other last
bits at the degrees of freedom they used, so a switch would change their bytes (the
rerun of a published grid's command would no longer match its file). The values below are from the
published rows: the quantile they were made with, and each row's p from its t (effect over
half_width / quantile). scipy's, for the record: t.ppf(0.975, 999) = 1.9623414611334493,
t.ppf(0.975, 4999) = 1.9604386466615247; 2 t.sf(7.348702588468429, 999) =
4.1557601276486945e-13 and 2 t.sf(4.474191770616934, 4999) = 7.840309629390838e-06; the
half-widths would read 0.41016171875438084 and 0.1329395600124426."""
from __future__ import annotations

import pytest

from agents.stats.student_t import t_pvalue, t_quantile_975

# (deals, effect, half_width, p) of published rows: learned_grid.json's first (2 teams,
# 1,000 deals) and learned_grid_family_no_stacking.json's first (5,000 deals)
ROWS = [(1000, 1.536, 0.41016171875438073, 4.1557601276491045e-13),
        (1000, 1.1085, 0.4272201472914809, 4.240983190516079e-07),
        (5000, 0.3034, 0.13293956001244256, 7.840309629376742e-06),
        (5000, 0.16575, 0.0821559263840793, 7.753044663708297e-05)]


def test_the_quantiles_the_published_intervals_were_made_with():
    assert t_quantile_975(999) == 1.9623414611334489
    assert t_quantile_975(4999) == 1.9604386466615245


@pytest.mark.parametrize("deals, effect, half, p", ROWS)
def test_published_p_values_come_back_bit_for_bit(deals, effect, half, p):
    t = effect / (half / t_quantile_975(deals - 1))
    assert t_pvalue(t, deals - 1) == p


@pytest.mark.parametrize("df", [1, 2, 5, 29, 30, 99, 999, 4999, 10**6])
def test_still_scipys_distribution_to_its_last_digits(df):
    """The same distribution as scipy's (to ~1e-8 relative at df 30, the expansion's worst),
    only not the same last bits."""
    stats = pytest.importorskip("scipy.stats")
    assert t_quantile_975(df) == pytest.approx(float(stats.t.ppf(0.975, df)), rel=2e-8)
    for t in (0.5, 2.0, 4.0):
        assert t_pvalue(t, df) == pytest.approx(float(2 * stats.t.sf(t, df)), rel=1e-9)
