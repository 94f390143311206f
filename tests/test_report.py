"""Tests for the report printed by `python3 stats.py` (stats.main) and its command line.

One small seeded configuration is pinned line by line, numbers included; the key numbers
are also recomputed here from random.gauss and the definitions, independently of stats.py.
"""

import math
import os
import subprocess
import sys

import pytest

import stats
from test_stats import gauss_dot_products, gauss_trials, naive_statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--samples", "60", "--trials", "4", "--dk", "16,64", "--seed", "3"]

# The report for SMALL, as printed on Python 3.9 to 3.13 (each prints exactly this).
GOLDEN = "\n".join([
    'The sqrt(d_k) in softmax(Q K^T / sqrt(d_k)) V: seed 3, 60 samples, d_k in [16, 64]',
    '',
    '1. Var(q . k) = d_k, and 1 after dividing by sqrt(d_k)',
    '------------------------------------------------------',
    ('   60 fresh (q, k) pairs per d_k; +- is one standard error, sqrt((3 d_k^2 + 6 d_'
     'k - d_k^2) / n)'),
    '   d_k  theory         simulated     std sqrt(d_k) scaled theory  scaled simulated',
    '    16      16      16.8 +- 3.2      4.10      4.00             1     1.050 +- 0.199',
    '    64      64      76.4 +- 12.0     8.74      8.00             1     1.194 +- 0.187',
    '',
    '1b. The projection setting: q = LN(x) W_Q, k = LN(x) W_K',
    '--------------------------------------------------------',
    '   d_model = 64, d_k = 16, W entries N(0, 1/d_model), 15 samples',
    '   Var(q . k): theory 16, simulated 9.29 +- 6.37',
    '',
    '2. Variance of the scaled score c (q . k): theory / simulated',
    '-------------------------------------------------------------',
    ('   d_k                  none           1/sqrt(d_k)                 1/d_k        '
     '     1/ln(d_k)'),
    ('    16             16 / 16.8              1 / 1.05      0.0625 / 0.06561        '
     ' 2.081 / 2.185'),
    ('    64            64 / 76.44             1 / 1.194     0.01562 / 0.01866        '
     '   3.7 / 4.419'),
    '   only 1/sqrt(d_k) keeps the variance at 1 for every d_k; 1/d_k drives it to 0,',
    '   1/ln(d_k) and no scaling let it grow with d_k',
    '',
    '3. Saturation of softmax over m = 16 keys (4 trials per d_k)',
    '------------------------------------------------------------',
    '   uniform weights would give max p = 0.0625 and entropy ln 16 = 2.7726',
    '                            unscaled   |         scaled by 1/sqrt(d_k)',
    '   d_k     max p   entropy   ||J||_F   |     max p   entropy   ||J||_F',
    '    16    0.7432    0.9273    0.2656   |    0.2186    2.4601    0.2930',
    '    64    0.7693    0.5556    0.2807   |    0.2616    2.2112    0.3289',
    '',
    '4. Gradient through attention_backward (random upstream gradient)',
    '-----------------------------------------------------------------',
    '   each cell: mean / median over the trials; ratio = unscaled / scaled',
    ('   d_k    ||dS|| unscaled      ||dS|| scaled              ratio    ||dQ|| unscal'
     'ed      ||dQ|| scaled              ratio'),
    ('    16 6.66e-01 / 6.2e-01 9.33e-01 / 8.6e-01 7.14e-01 / 7.2e-01 2.28e+00 / 2.3e+'
     '00 9.11e-01 / 1.0e+00 2.50e+00 / 2.3e+00'),
    ('    64 1.93e-01 / 1.1e-01 4.63e-01 / 5.1e-01 4.16e-01 / 2.1e-01 1.48e+00 / 9.8e-'
     '01 4.53e-01 / 4.7e-01 3.27e+00 / 2.1e+00'),
    '   dS is the gradient reaching the softmax logits, dQ the one reaching the queries.',
    '   Unscaled, the typical (median) gradient collapses as d_k grows; the mean of',
    '   ||dQ|| does not, because the rare rows whose top two scores nearly tie keep',
    '   an O(1) softmax gradient and multiply it by ||k|| ~ sqrt(d_k).',
    '   Why median ||dQ|| can be larger unscaled though ||dS|| is smaller: dQ = c dS K',
    '   with c = 1 unscaled and 1/sqrt(d_k) scaled, and each key has ||k|| ~ sqrt(d_k),',
    '   so ||dQ|| ~ c sqrt(d_k) ||dS||: the unscaled gradient keeps a factor sqrt(d_k).',
    '   d_k  c sqrt(d_k) median ||dS||: unscaled   scaled   median ||dQ||: unscaled   scaled',
    '    16                             2.49e+00 8.63e-01                  2.29e+00 1.00e+00',
    '    64                             8.47e-01 5.14e-01                  9.80e-01 4.68e-01',
    ('   At d_k = 64, median ||dS|| is 0.11 unscaled against 0.51 scaled, but times sq'
     'rt(64) = 8'),
    '   it is 0.85: hence median ||dQ|| 0.98 unscaled against 0.47 scaled.',
    '',
    '5. Pictures',
    '-----------',
    '   softmax([2, 1, 0, -1])',
    '   p_1 |##########################               0.6439',
    '   p_2 |#########                                0.2369',
    '   p_3 |###                                      0.08714',
    '   p_4 |#                                        0.03206',
    '   Jacobian diagonal p_i (1 - p_i): [0.229, 0.181, 0.0796, 0.031]',
    '   softmax([20, 10, 0, -10]): the same logits times 10',
    '   p_1 |######################################## 1',
    '   p_2 |                                         4.54e-05',
    '   p_3 |                                         2.061e-09',
    '   p_4 |                                         9.357e-14',
    '   Jacobian diagonal p_i (1 - p_i): [4.54e-05, 4.54e-05, 2.06e-09, 9.36e-14]',
    '   simulated Var(q . k): grows in proportion to d_k',
    '   d_k=16 |#########                                16.8',
    '   d_k=64 |######################################## 76.44',
    '   simulated Var(q . k / sqrt(d_k)): level at 1 (bars drawn from 0 to 2)',
    '   d_k=16 |#####################                    1.05',
    '   d_k=64 |########################                 1.194',
    '',
])



def report(argv, capsys):
    assert stats.main(argv) == 0
    return capsys.readouterr().out


def test_the_small_report_is_pinned_line_by_line(capsys):
    out = report(SMALL, capsys)
    for got, expected in zip(out.split("\n"), GOLDEN.split("\n")):
        assert got == expected
    assert out == GOLDEN


def row(text, header, d_k):
    """The line of the table under `header` whose first field is d_k."""
    section = text[text.index(header):]
    return next(line for line in section.split("\n") if line.split()[:1] == [str(d_k)])


def test_the_report_numbers_are_those_of_the_definitions(capsys):
    out = report(SMALL, capsys)
    for d_k in (16, 64):
        xs = gauss_dot_products(d_k, 60, 3 + d_k)  # section 1: seed + d_k
        v = math.fsum(x * x for x in xs) / 60
        se = math.sqrt((2 * d_k * d_k + 6 * d_k) / 60)
        line = row(out, "1. Var(q . k)", d_k)
        assert line == (f"{d_k:>6} {d_k:>7} {v:>9.1f} +- {se:<5.1f} {math.sqrt(v):>7.2f} "
                        f"{math.sqrt(d_k):>9.2f} {1:>13} {v / d_k:>9.3f} +- {se / d_k:.3f}")
        c = 1 / math.sqrt(d_k)
        trials = gauss_trials(d_k, 16, 8, 4, 3 + d_k)
        (u_sat, u_grad), (s_sat, s_grad) = (naive_statistics(trials, c) for c in (1.0, c))
        sat = row(out, "3. Saturation", d_k).split()
        assert [float(v) for v in sat[1:4] + sat[5:8]] == \
            [round(v, 4) for v in u_sat + s_sat]
        why = row(out, "   Why median", d_k).split()
        assert why[1:] == [f"{v:.2e}" for v in (math.sqrt(d_k) * u_grad[2], s_grad[2],
                                                 u_grad[3], s_grad[3])]
    assert "   At d_k = 64, median ||dS|| is 0.11 unscaled against 0.51 scaled" in out


def test_the_d_k_64_sentence_appears_only_with_d_k_64(capsys):
    out = report(["--samples", "5", "--trials", "2", "--dk", "2,3", "--keys", "3"], capsys)
    assert "Why median ||dQ||" in out and "At d_k = 64" not in out
    assert "over m = 3 keys (2 trials per d_k)" in out


def test_the_report_is_reproducible_and_follows_the_seed(capsys):
    small = ["--samples", "20", "--trials", "3", "--dk", "4,9"]
    first, second = report(small, capsys), report(small, capsys)
    assert first == second
    assert report(small + ["--seed", "1"], capsys) != first
    assert first.startswith("The sqrt(d_k) in softmax(Q K^T / sqrt(d_k)) V: seed 0, 20 samples, "
                            "d_k in [4, 9]\n")


@pytest.mark.parametrize("argv, message", [
    (["--keys", "1"], "argument --keys: must be at least 2, not 1"),
    (["--keys", "0"], "argument --keys: must be at least 2, not 0"),
    (["--samples", "0"], "argument --samples: must be at least 1, not 0"),
    (["--trials", "0"], "argument --trials: must be at least 1, not 0"),
    (["--samples", "x"], "argument --samples: must be a whole number, not 'x'"),
    (["--dk", "1"], "--dk needs at least one d_k, each >= 2 (the 1/ln(d_k) scale of section 2 "
                    "is undefined at 1)"),
    (["--dk", "16,1"], "--dk needs at least one d_k, each >= 2"),
    (["--dk", ","], "--dk needs at least one d_k, each >= 2"),
    (["--dk", "16,x"], "--dk takes whole numbers separated by commas, not '16,x'"),
    (["--dk", "99999999999999999999"],
     "these options need 302000000000000000533140 normal draws, 199999999999999999998000 in one"),
    (["--samples", "1000000000"], "the limits are 50000000 in all and 10000000 per row"),
    (["--dk", "5001"], "10002000 in one table row; the limits are 50000000 in all and 10000000"),
    (["--seed", "1.5"], "argument --seed: invalid int value: '1.5'"),
])
def test_bad_options_get_a_clear_message_and_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        stats.main(argv)
    assert exit.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_the_draws_are_counted_per_call():
    args = stats._parser().parse_args(SMALL)
    assert stats._report_draws(args) == [2 * 16 * 60, 2 * 64 * 60, 15 * 64 * 33,
                                         4 * (16 * 17 + 8 * 17), 4 * (64 * 17 + 8 * 17)]
    args = stats._parser().parse_args(["--samples", "3", "--keys", "5", "--dk", "7"])
    assert stats._report_draws(args) == [42, 1 * 64 * 33, 60 * (7 * 6 + 8 * 6)]


def test_the_limits_are_inclusive(monkeypatch, capsys):
    argv = ["--samples", "3", "--trials", "1", "--dk", "2", "--keys", "2"]
    draws = stats._report_draws(stats._parser().parse_args(argv))  # [12, 2112, 26]
    monkeypatch.setattr(stats, "_MAX_DRAWS", max(draws))
    monkeypatch.setattr(stats, "_MAX_REPORT_DRAWS", sum(draws))
    assert "5. Pictures" in report(argv, capsys)  # exactly at both limits: runs
    monkeypatch.setattr(stats, "_MAX_REPORT_DRAWS", sum(draws) - 1)
    with pytest.raises(SystemExit):
        stats.main(argv)
    assert f"these options need {sum(draws)} normal draws" in capsys.readouterr().err
    monkeypatch.setattr(stats, "_MAX_REPORT_DRAWS", sum(draws))
    monkeypatch.setattr(stats, "_MAX_DRAWS", max(draws) - 1)
    with pytest.raises(SystemExit):
        stats.main(argv)
    assert f"{max(draws)} in one table row" in capsys.readouterr().err


def test_the_report_limits_are_those_documented():
    assert (stats._MAX_DRAWS, stats._MAX_REPORT_DRAWS) == (10 ** 7, 5 * 10 ** 7)
    assert stats._DEFAULT_DKS == (16, 64, 128, 512, 1024) and stats._PROJECTION == (64, 16)


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit:
        stats.main(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    for option in ("--seed", "--samples", "--dk", "--trials", "--keys"):
        assert option in out
    assert "--worked-examples" not in out


def test_bar_chart_lines():
    assert stats._bar_chart([("a", 2.0), ("bb", 1.0), ("c", 0.0)], width=10) == \
        [" a |########## 2", "bb |#####      1", " c |           0"]
    assert stats._bar_chart([("a", 1.0), ("b", 0.5)], width=4) == ["a |#### 1", "b |##   0.5"]
    assert stats._bar_chart([("x", 0.0)], width=3) == ["x |    0"]  # top 0: no bars
    assert stats._bar_chart([("x", 1.0)], width=4, top=2.0) == ["x |##   1"]


def run_script(*args, **kwargs):
    return subprocess.Popen([sys.executable, os.path.join(ROOT, "stats.py"), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            text=True, **kwargs)


def test_the_script_runs_and_closing_the_pipe_is_quiet():
    whole = run_script("--samples", "30", "--trials", "3", "--dk", "8")
    out, err = whole.communicate(timeout=60)
    assert whole.returncode == 0 and err == ""
    assert out.startswith("The sqrt(d_k)") and "5. Pictures" in out
    # `python3 stats.py | head -1`: the reader leaves after one line
    early = run_script("--samples", "30", "--trials", "200", "--dk", "8,512")
    first = early.stdout.readline()
    early.stdout.close()
    err = early.stderr.read()
    assert early.wait(timeout=60) == 1
    assert first.startswith("The sqrt(d_k)") and err == ""


def test_head_minus_one_in_a_shell_prints_no_traceback():
    shell = subprocess.run(f"{sys.executable} stats.py --dk 8,512 --trials 200 | head -1",
                           shell=True, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert shell.stdout.startswith("The sqrt(d_k)") and shell.stdout.count("\n") == 1
    assert "Traceback" not in shell.stderr and shell.stderr == ""


def test_the_d_k_64_sentence_quotes_the_d_k_64_row_whatever_the_order(capsys):
    stats.main(["--samples", "20", "--trials", "3", "--dk", "64,16", "--seed", "1"])
    out = capsys.readouterr().out.splitlines()
    row = next(line.split() for line in out if line.split()[:1] == ["64"]
               and len(line.split()) == 5)
    sentence = " ".join(line for line in out if line.startswith("   At d_k = 64")
                        or line.startswith("   it is "))
    assert f"median ||dQ|| {float(row[3]):.2f} unscaled" in sentence, (row, sentence)
