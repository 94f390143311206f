"""The training study's claims in the inventory, and the sentences of other pages about it.

docs/experiments.md and the README's section "Beyond initialisation" are checked by the
tests of tests/test_learning_claims.py, which quote each sentence in full and recompute it
from the committed records (json, statistics.median, the order statistics in Fractions;
never experiments.learning.docs_data or experiments.learning_tables), and by tests of the
training code in tests/test_learning.py.  Each is registered here with `covered`, by how
its sentence starts, so that tests/CLAIMS.md lists it with the claims of the other pages;
a test named without its file is one of tests/test_learning_claims.py.  Value markers read
as {NAME} here, as everywhere in the inventory; the tests there quote the values
themselves, so that a regenerated number is checked against the records as well.

The answers of docs/interview.md and the paragraphs of docs/derivations.md about the
training experiment are checked below with the same readers of the records, or registered
with the test there that checks the same fact.
"""

import math
import os
import statistics
from fractions import Fraction

from tests import test_learning_claims as study
from tests.claims import claim, covered, normalise, source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUDY, README, SECTION = study.STUDY, study.README, study.SECTION
INTERVIEW, DERIVATIONS = "docs/interview.md", "docs/derivations.md"
STUDY_TESTS = "test_learning_claims.py::"
LEARNING = "test_learning.py::"  # a claim guarded there, by a test of the code itself
VASWANI = ("Vaswani et al. 2017, Section 3.2.1: \"additive attention outperforms dot product "
           "attention without scaling for larger values of d_k [3]\", [3] = Britz et al. 2017, "
           "then \"We suspect that for large values of d_k, the dot products grow large in "
           "magnitude\" (literature.md item 6)")
TABLE_3 = "Vaswani et al. 2017, Table 3 row (B); not rechecked in literature.md"


def by(test):
    """The test as `covered` names it: FILE.py::name, a bare name one of the study's."""
    return test if "::" in test else STUDY_TESTS + test


# ------------------------------------------------------------------ the study's pages

STUDY_CLAIMS = [  # (page, how the sentence starts, the test that checks it)
    (STUDY, "What it compares is the **initial logit scale, and with it the effective learning "
            "rate**: any two scales are the same model",
     "test_any_two_scales_are_one_model_with_rescaled_weights_rate_and_adam_s_eps"),
    (STUDY, "It is pure Python (the standard library and the project's",
     LEARNING + "test_the_records_are_the_same_for_every_number_of_jobs"),
    (STUDY, "`--jobs N` runs N training runs at a time",
     LEARNING + "test_the_records_are_the_same_for_every_number_of_jobs"),
    (STUDY, "A d_k without a tuned rate is refused with the command that tunes it",
     LEARNING + "test_the_command_line_reports_a_d_k_without_a_tuned_rate_instead_of_a_traceback"),
    (STUDY, "a sweep that does not cover the committed set of arms never writes over",
     LEARNING + "test_a_partial_sweep_refuses_to_replace_the_committed_rates"),
    (STUDY, "`--scales all` adds 1/ln(d_k) and 1, and with them the pointer-loss control",
     LEARNING + "test_the_default_scales_print_no_pointer_control_and_all_scales_do"),
    (STUDY, "`--publish` and `--sweep` say which committed file they will overwrite",
     LEARNING + "test_publish_announces_its_file_shows_progress_and_writes_the_records"),
    (STUDY, "Every arm of a seed sees the same questions from the same initial weights",
     LEARNING + "test_every_arm_of_a_seed_gets_the_same_first_batch_and_initial_weights"),
    (STUDY, "Its grid is the ladder 2^(k/2), 13 rates centred on a guess",
     "test_every_grid_is_centred_on_its_guess_and_widened_only_while_its_winner_is_at_an_end"),
    (STUDY, "The arms of the per-question intervention (below) are the exception",
     "test_every_grid_is_centred_on_its_guess_and_widened_only_while_its_winner_is_at_an_end"),
    (STUDY, "The identity holds for them too",
     "test_the_per_question_identity_maps_eps_the_other_way"),
    (STUDY, "For the unscaled arm, its guess would put the grids too low",
     "test_the_identity_s_guess_would_have_put_the_per_question_unscaled_grids_below_their_best"),
    (STUDY, "A winner at an end of its grid widens the grid by 4 rates",
     "test_every_grid_is_centred_on_its_guess_and_widened_only_while_its_winner_is_at_an_end"),
    (STUDY, "For a continuous quantity that interval holds the population median",
     "test_ten_seeds_give_the_2nd_and_9th_values_and_ties_can_only_raise_the_coverage"),
    (STUDY, "Step counts are integers, and ties can only raise it",
     "test_ten_seeds_give_the_2nd_and_9th_values_and_ties_can_only_raise_the_coverage"),
    (STUDY, "A median over fewer seeds has the interval and the coverage of its own n",
     "test_every_median_is_over_the_records_behind_it_and_says_its_coverage"),
    (STUDY, "Interval ends are rounded outward.",
     "test_the_diagnostics_table_is_rebuilt_from_the_records"),
    (STUDY, "the training loop's products of weights use that expression",
     LEARNING + "test_the_products_round_exactly_like_attention_matmul"),
    (STUDY, "the rest of the forward pass reads O = P V and dP = dO V^T off the one-hot V",
     LEARNING + "test_the_question_gradient_is_attention_steps_and_score_gradient_bit_for_bit"),
    (STUDY, "`tests/test_learning.py` checks the gradient against the textbook route",
     LEARNING + "test_fused_gradient_equals_the_textbook_route_through_attention_backward"),
    (STUDY, "So the training runs coincide when the SGD rate is multiplied by c/c'",
     "test_any_two_scales_are_one_model_with_rescaled_weights_rate_and_adam_s_eps"),
    (STUDY, "Where a is a power of two the runs are bit-identical.",
     LEARNING + "test_any_two_scales_retrace_each_other_under_the_rate_and_eps_mapping"),
    (STUDY, "Under the per-question intervention (below), each question's gradient is divided",
     "test_the_per_question_identity_maps_eps_the_other_way"),
    (STUDY, "The experiment uses no weight decay",
     LEARNING + "test_sgd_step_moves_each_weight_by_minus_lr_times_its_gradient"),
    (STUDY, "Each cell is the median of the steps to 90% held-out accuracy",
     "test_the_steps_table_is_rebuilt_from_the_records"),
    (STUDY, "`python3 experiments/learning.py --scales all --perturb 7 --jobs 2` prints these",
     "test_the_named_command_prints_the_steps_table_and_without_perturb_no_stars"),
    (STUDY, "Each arm at its own rate, 1/sqrt(d_k) and 1/d_k learn in a handful of steps",
     "test_the_paper_s_scale_and_mup_s_learn_in_a_handful_of_steps_at_every_d_k"),
    (STUDY, "The two scales whose initial logits spread wider as d_k grows",
     "test_the_scales_whose_initial_logits_spread_with_d_k_slow_down_unscaled_most"),
    (STUDY, "The unscaled arm slows down most",
     "test_the_scales_whose_initial_logits_spread_with_d_k_slow_down_unscaled_most"),
    (STUDY, "with the two-sided sign test over the pairs that differ",
     "test_the_paired_table_is_rebuilt_from_the_records"),
    (STUDY, "Multiplying the initial weights by 1 + k 2^-52 (k = 1..7) changes them",
     "test_the_perturbations_move_each_initial_weight_by_a_few_units_in_the_last_place"),
    (STUDY, "For most arms nothing changes",
     "test_only_the_unscaled_arm_is_rounding_sensitive_and_far"),
    (STUDY, "Of all the perturbed runs", "test_the_perturbed_runs_that_miss_are_counted"),
    (STUDY, "The other order of summation changes the steps of some seed",
     "test_another_order_of_summation_changes_only_arms_the_perturbations_change"),
    (STUDY, "The number of arms whose median under that order falls outside",
     "test_left_to_right_sums_keep_every_median_inside_its_published_interval"),
    (STUDY, "The runs of the table that missed 300 steps, run again to 1000 steps",
     "test_the_long_table_is_rebuilt_from_the_records"),
    (STUDY, "So whether the unscaled model always gets there given enough steps is not shown",
     "test_a_miss_of_the_long_runs_is_itself_a_matter_of_rounding"),
    (STUDY, "A median written as ≥N has a miss for one of its two middle values",
     "test_a_median_over_one_miss_is_printed_as_the_least_it_can_be"),
    (STUDY, "Median steps [interval] over the held-out seeds, each cell \"rate: steps\"",
     "test_the_transfer_table_is_rebuilt_from_the_records"),
    (STUDY, "One global rate carries over for 1/d_k under Adam",
     "test_one_global_rate_carries_over_for_1_over_d_k_under_adam_and_the_paper_s_under_sgd"),
    (STUDY, "muP's rule carries 1/d_k's rate over under both optimizers.",
     "test_mup_s_own_rule_carries_1_over_d_k_over_under_both_optimizers"),
    (STUDY, "for components with correlation rho, E[q · k] = rho d_k and Var(q · k) = d_k",
     "test_stats.py::test_correlated_moments_equal_the_gaussian_expectations"),
    (STUDY, "The \"seeds\" column counts the runs that reached 90%",
     "test_the_logits_tables_are_rebuilt_from_the_records"),
    (STUDY, "A row over n seeds has the interval of its own n",
     "test_every_median_is_over_the_records_behind_it_and_says_its_coverage"),
    (STUDY, "At the rate re-tuned for each d_k, with SGD, the median scaled logit",
     "test_at_the_re_tuned_rate_and_sgd_the_scaled_logit_stays_within_a_factor_of_two"),
    (STUDY, "Under Adam, 1/d_k's median falls as d_k grows",
     "test_under_adam_1_over_d_k_s_median_falls_but_not_beyond_its_intervals"),
    (STUDY, "Under 1/d_k the query aligns with its key about equally at every d_k",
     "test_under_sgd_1_over_d_k_aligns_equally_and_the_paper_s_scale_less_as_d_k_grows"),
    (STUDY, "Under 1/sqrt(d_k) it aligns less as d_k grows",
     "test_under_sgd_1_over_d_k_aligns_equally_and_the_paper_s_scale_less_as_d_k_grows"),
    (STUDY, "Between the first 90% and step 100, training keeps growing the scaled logits",
     "test_training_keeps_growing_the_logits_after_90_percent_more_under_adam"),
    (STUDY, "Under Adam at one fixed rate, 1/sqrt(d_k)'s scaled logit grows with d_k",
     "test_at_one_fixed_rate_adam_shows_mup_s_picture_for_the_paper_s_scale"),
    (STUDY, "Its cosine changes little",
     "test_at_one_fixed_rate_adam_shows_mup_s_picture_for_the_paper_s_scale"),
    (STUDY, "So the trained logits of the first table hold at a rate re-tuned for each d_k",
     "test_at_one_fixed_rate_adam_shows_mup_s_picture_for_the_paper_s_scale"),
    (STUDY, "Under SGD at one fixed rate the scaled logit does not grow for either scale",
     "test_under_sgd_at_one_fixed_rate_the_scaled_logit_does_not_grow"),
    (STUDY, "At the initial weights (fixed readout, or the pointer loss",
     "test_the_diagnostics_table_is_rebuilt_from_the_records"),
    (STUDY, "Unscaled at large d_k, softmax starts nearly one-hot",
     "test_at_initialisation_unscaled_saturates_and_a_few_questions_carry_the_gradient"),
    (STUDY, "so that every question counts equally",
     LEARNING + "test_the_per_question_gradient_is_the_mean_of_unit_question_gradients"),
    (STUDY, "The last two columns are the steps of the unscaled arm over those of 1/sqrt(d_k)",
     "test_the_per_question_table_is_rebuilt_from_the_records"),
    (STUDY, "At d_k = 64 and 256 the intervention removes most of the unscaled arm's slowdown",
     "test_per_question_normalisation_removes_most_of_unscaled_adam_s_slowdown"),
    (STUDY, "At d_k = 16 the unscaled softmax is less saturated",
     "test_per_question_normalisation_removes_most_of_unscaled_adam_s_slowdown"),
    (STUDY, "There the intervals with and without the intervention overlap",
     "test_per_question_normalisation_removes_most_of_unscaled_adam_s_slowdown"),
    (STUDY, "So the measurements agree with the hypothesis",
     "test_per_question_normalisation_removes_most_of_unscaled_adam_s_slowdown"),
    (STUDY, "The textbook float64 form, dS = p * (g - <p, g>), does not once",
     LEARNING + "test_the_textbook_backward_is_p_times_g_minus_its_mean_and_loses_a_saturated_"
     "gradient"),
    (STUDY, "`--backward textbook` trains with that form.",
     "test_the_accurate_backward_pass_changes_the_intervention_s_outcome"),
    (STUDY, "With the library's backward pass, the unscaled arm under the intervention misses",
     "test_the_accurate_backward_pass_changes_the_intervention_s_outcome"),
    (STUDY, "With the textbook one it misses on",
     "test_the_accurate_backward_pass_changes_the_intervention_s_outcome"),
    (STUDY, "Seed by seed, the textbook form's unscaled arm under the intervention is",
     "test_the_accurate_backward_pass_changes_the_intervention_s_outcome"),
    (STUDY, "Plain Adam, whose batch gradient the large gradients carry, changes little",
     "test_the_accurate_backward_pass_changes_the_intervention_s_outcome"),
    (STUDY, "So the intervention's finding needs an accurate backward pass",
     "test_the_accurate_backward_pass_changes_the_intervention_s_outcome"),
    (STUDY, "With the pointer loss -log p_j*, dL/dS = p - e_j*: the log cancels",
     LEARNING + "test_pointer_gradient_is_the_softmax_backward_of_minus_e_over_p"),
    (STUDY, "Summed over the three d_k (pairs that share their seeds' tasks",
     "test_the_pointer_loss_removes_most_of_the_slowdown_and_on_these_seeds_never_faster"),
    (STUDY, "So the pointer loss removes most of the slowdown, not all of it",
     "test_the_pointer_loss_removes_most_of_the_slowdown_and_on_these_seeds_never_faster"),
    (STUDY, "On more seeds it sometimes is.",
     "test_on_fresh_seeds_the_unscaled_arm_is_sometimes_faster_under_the_pointer_loss"),
    (STUDY, "Summed over the three d_k, with the fixed readout the unscaled arm is",
     "test_on_fresh_seeds_the_unscaled_arm_is_sometimes_faster_under_the_pointer_loss"),
    (STUDY, "At d_k > d_model each entry of q and k is still N(0, 1)",
     LEARNING + "test_unscaled_logit_variance_is_d_k_even_though_d_k_exceeds_d_model"),
    (STUDY, "**10 held-out seeds**: an interval runs from the 2nd to the 9th value",
     "test_ten_seeds_give_the_2nd_and_9th_values_and_ties_can_only_raise_the_coverage"),
    (STUDY, "Rates come from 5 tuning seeds on a factor-sqrt(2) grid.",
     "test_the_rates_come_from_five_tuning_seeds_on_a_factor_sqrt_2_grid"),
    (STUDY, "A training run of 20 steps took 3.60 times the CPU time",
     "test_a_larger_d_k_is_measured_by_the_benchmark_the_page_names"),
    (STUDY, "Every sum is math.fsum and every dot product rounds like `attention.matmul`",
     LEARNING + "test_a_published_cell_is_regenerated_from_the_code"),
    (STUDY, "The tables here are generated from the committed records (`results.json`,",
     "test_docs.py::test_every_generated_file_is_what_the_build_writes_now"),
    (README, "It compares the initial logit scale, and with it the effective rate",
     "test_any_two_scales_are_one_model_with_rescaled_weights_rate_and_adam_s_eps"),
    (README, "At their own rates, 1/sqrt(d_k) and 1/d_k learn in a handful of steps",
     "test_the_paper_s_scale_and_mup_s_learn_in_a_handful_of_steps_at_every_d_k"),
    (README, "the scales whose initial logits spread wider as d_k grows slow down",
     "test_the_scales_whose_initial_logits_spread_with_d_k_slow_down_unscaled_most"),
    (README, "and the unscaled arm's step counts are partly rounding noise (*)",
     "test_only_the_unscaled_arm_is_rounding_sensitive_and_far"),
    (README, "Median steps to 90% held-out accuracy [interval] over the held-out seeds, as",
     "test_the_named_command_prints_the_steps_table_and_without_perturb_no_stars"),
    (README, "some seeds' steps move with the initial weights by a few ulps.",
     "test_the_steps_table_is_rebuilt_from_the_records"),
    (README, "At a fixed correlation rho, E[q · k] = rho d_k",
     "test_stats.py::test_correlated_logits_grow_like_sqrt_dk_under_the_paper_scale_and_"
     "not_under_mup"),
    (README, "The trained model here does not hold rho fixed",
     "test_under_sgd_1_over_d_k_aligns_equally_and_the_paper_s_scale_less_as_d_k_grows"),
    (README, "re-tuned for each d_k, with SGD, the median logit softmax sees",
     "test_at_the_re_tuned_rate_and_sgd_the_scaled_logit_stays_within_a_factor_of_two"),
    (README, "at one fixed rate under Adam, 1/sqrt(d_k)'s grows with d_k",
     "test_at_one_fixed_rate_adam_shows_mup_s_picture_for_the_paper_s_scale"),
    (README, "In this toy, one global rate carried unchanged to another d_k",
     "test_one_global_rate_carries_over_for_1_over_d_k_under_adam_and_the_paper_s_under_sgd"),
    (README, "muP's own rule for these weights (Adam's rate constant, SGD's scaled with d_k)",
     "test_mup_s_own_rule_carries_1_over_d_k_over_under_both_optimizers"),
]
for page, start, test in STUDY_CLAIMS:
    covered(page, start, by(test))

source(STUDY, "The paper trains no unscaled model itself: Section 3.2.1 cites Britz et al.",
       VASWANI)
source(STUDY, "**Not the paper's experiment.** Its Table 3 row (B) varies d_k", TABLE_3)
source(STUDY, "Since only d_k grows here, it treats W_Q and W_K as input weights",
       "Yang et al. 2022, Tensor Programs V, Table 3 (input weights: SGD rate times fan_out, "
       "Adam rate constant), read in several copies of the table, not in the paper itself")
source(README, "The paper trains no unscaled model of its own: Section 3.2.1 cites an empirical "
               "result, Britz et al. (2017, its reference [3]), for additive attention "
               "outperforming dot-product attention without scaling at larger d_k, and then "
               "states a suspicion as the reason", VASWANI)
source(README, "its Table 3 row (B) varies d_k (16 and 32, against the base model's 64) with "
               "the scale on in every row.", TABLE_3)


def section_text():
    """The README's section about the study, normalised as the inventory reads pages."""
    with open(os.path.join(ROOT, README), encoding="utf-8") as f:
        text = f.read()
    return normalise(text.split(f"\n## {SECTION}\n", 1)[1].split("\n## ", 1)[0])


def test_the_readme_s_claims_of_the_study_lie_in_its_section():
    listed = [start for page, start, _ in STUDY_CLAIMS if page == README]
    assert len(listed) > 10
    for start in listed:
        assert normalise(start) in section_text(), start


def test_every_claims_test_of_the_study_is_in_the_inventory():
    # every test of tests/test_learning_claims.py checks a listed claim, except the tables
    # rebuilt cell by cell (their claims are the cells) and the count of records behind
    # each median, which checks the coverage statements the tables print
    listed = {test for _, _, test in STUDY_CLAIMS}
    tables = {name for name in vars(study) if name.startswith("test_the_") and "rebuilt" in name}
    tests = {name for name in vars(study) if name.startswith("test_")} - tables - {
        "test_every_median_is_over_the_records_behind_it_and_says_its_coverage"}
    assert tests <= listed, sorted(tests - listed)


# ------------------------------------------------------------------ docs/interview.md

for page, start, test in (
        (INTERVIEW, "1/d_k trains, at its own learning rate.",
         "test_the_paper_s_scale_and_mup_s_learn_in_a_handful_of_steps_at_every_d_k"),
        (INTERVIEW, "Under Adam, at the re-tuned rate, 1/d_k's median falls as d_k grows, "
                    "{learning.logit.adam.inv.target.scaled}, but its intervals at d_k = 16 and "
                    "256 overlap.",
         "test_under_adam_1_over_d_k_s_median_falls_but_not_beyond_its_intervals"),
        (INTERVIEW, "Under Adam at one fixed rate, d_k = 16's, the picture for 1/sqrt(d_k) is "
                    "muP's: its scaled logit grows with d_k",
         "test_at_one_fixed_rate_adam_shows_mup_s_picture_for_the_paper_s_scale"),
        (INTERVIEW, "(under SGD at one fixed rate it does not grow either;",
         "test_under_sgd_at_one_fixed_rate_the_scaled_logit_does_not_grow"),
        (INTERVIEW, "One global rate, tuned at d_k = 16 and used unchanged, carries over for "
                    "1/d_k under Adam and for 1/sqrt(d_k) under SGD.",
         "test_one_global_rate_carries_over_for_1_over_d_k_under_adam_and_the_paper_s_under_sgd"),
        (INTERVIEW, "muP's own rule for these weights, which are input weights here (Adam's rate "
                    "constant, SGD's scaled with d_k), carries 1/d_k's rate over under both "
                    "optimizers.",
         "test_mup_s_own_rule_carries_1_over_d_k_over_under_both_optimizers"),
        (INTERVIEW, "tests/test_learning.py checks every pair of the four scales, both "
                    "optimizers, over 20 steps at d_k = 16 and 256: bit-identical where a is a "
                    "power of two; otherwise equal up to the rounding that training amplifies, "
                    "within 1e-12 at a quarter of the tuned rate)",
         LEARNING + "test_any_two_scales_retrace_each_other_under_the_rate_and_eps_mapping"),
        (INTERVIEW, "It starts saturated: at d_k = 256 the largest weight is "
                    "{learning.diag.largest_weight.one.256}.",
         "test_at_initialisation_unscaled_saturates_and_a_few_questions_carry_the_gradient"),
        (INTERVIEW, "multiplying the initial weights by 1 + k 2^-52, k = 1..7, moves some seeds' "
                    "steps, often by tens",
         "test_only_the_unscaled_arm_is_rounding_sensitive_and_far"),
        (INTERVIEW, "Summed over the three d_k, with the pointer loss the unscaled arm is "
                    "{learning.pointer.pointer}: most of the slowdown goes, not all of it.",
         "test_the_pointer_loss_removes_most_of_the_slowdown_and_on_these_seeds_never_faster")):
    covered(page, start, by(test))


def uniform():
    """The weight of each of the 8 keys under uniform attention."""
    return Fraction(1, study.RESULTS["settings"]["items"])


@claim(INTERVIEW, "At initialisation 1/d_k makes the logits small: at d_k = 256 their standard "
                  "deviation is {learning.diag.logit_std.inv.256}, so attention starts nearly "
                  "uniform. The largest of the 8 weights is "
                  "{learning.diag.largest_weight.inv.256} (uniform is 0.125).")
@claim(INTERVIEW, "That does not starve the gradient: the median ‖dL/dS‖ is "
                  "{learning.diag.gradient.inv.256}. Under 1/sqrt(d_k) it is "
                  "{learning.diag.gradient.sqrt.256}.")
def test_at_initialisation_1_over_d_k_starts_near_uniform_and_its_gradient_is_not_tiny():
    for name, scale, field in (("logit_std.inv", "1/d_k", "logit_std"),
                               ("largest_weight.inv", "1/d_k", "largest_weight"),
                               ("gradient.inv", "1/d_k", "gradient"),
                               ("gradient.sqrt", "1/sqrt(d_k)", "gradient")):
        study.assert_rounded(study.value(INTERVIEW, f"learning.diag.{name}.256"),
                             study.diagnostics(scale, 256, field))
    assert uniform() == Fraction("0.125")
    # "nearly" and "tiny" with the yardstick docs/experiments.md uses for the unscaled
    # arm's gradient, a tenth of 1/sqrt(d_k)'s, interval against interval: the largest
    # weight's excess over uniform is less than a tenth of 1/sqrt(d_k)'s excess ...
    inv, sqrt = (study.diagnostic(s, 256, "largest_weight") for s in ("1/d_k", "1/sqrt(d_k)"))
    assert Fraction(inv[2]) - uniform() < (Fraction(sqrt[1]) - uniform()) / 10
    assert study.diagnostic("1/d_k", 256, "logit_std")[2] < study.diagnostic(
        "1/sqrt(d_k)", 256, "logit_std")[1] / 10  # and so are the logits
    # ... and the gradient is not tiny: at every d_k, its interval lies above a tenth of
    # 1/sqrt(d_k)'s
    for d_k in study.D_KS:
        assert study.diagnostic("1/d_k", d_k, "gradient")[1] > study.diagnostic(
            "1/sqrt(d_k)", d_k, "gradient")[2] / 10, d_k


@claim(INTERVIEW, "The trained model does not hold the correlation fixed, and what it does "
                  "depends on the rate.")
def test_training_does_not_hold_the_correlation_fixed_and_the_rate_decides_what_it_does():
    # not fixed: at the re-tuned rate under SGD, 1/sqrt(d_k)'s cosine of q with its key
    # falls, each interval below the one before
    cos = study.logit_cells("sgd", "1/sqrt(d_k)", "cos")
    assert cos[0][1] > cos[1][2] and cos[1][1] > cos[2][2]
    # the rate decides: at d_k = 256 under Adam, 1/sqrt(d_k)'s cosine and scaled logit at
    # the re-tuned rate and at d_k = 16's rate have intervals that lie apart
    for field in ("cos", "scaled"):
        tuned = study.logit_cells("adam", "1/sqrt(d_k)", field)[-1]
        fixed = study.logit_cells("adam", "1/sqrt(d_k)", field, fixed_rate=True)[-1]
        assert tuned[2] < fixed[1], field


@claim(INTERVIEW, "So under Adam a trained logit that does not grow with d_k is a property of "
                  "the re-tuned rate, not of the scale alone")
def test_under_adam_the_paper_s_scale_keeps_its_logit_only_at_the_re_tuned_rate():
    # "does not grow" as docs/experiments.md reads it for SGD at one fixed rate: the median
    # at d_k = 64 and 256 below the upper end of the interval at d_k = 16
    tuned = study.logit_cells("adam", "1/sqrt(d_k)", "scaled")
    assert all(c[0] < tuned[0][2] for c in tuned[1:])
    fixed = study.logit_cells("adam", "1/sqrt(d_k)", "scaled", fixed_rate=True)
    assert fixed[-1][1] > fixed[0][2]  # at one rate it grows: the intervals lie apart


@claim(INTERVIEW, "One global rate keeps the first fixed for 1/sqrt(d_k) and the second for "
                  "1/d_k; muP's SGD rule, lr growing like d_k, keeps the first fixed for 1/d_k.")
def test_the_first_order_count_stays_fixed_for_the_pairs_the_answer_names():
    # the count the answer gives: an SGD step moves a logit like lr c^2 d_k, an Adam step
    # like lr c d_k; exactly, in Fractions, at d_k a power of 4 (so sqrt(d_k) is an integer)
    def sgd(lr, c, d_k):
        return lr * c * c * d_k

    def adam(lr, c, d_k):
        return lr * c * d_k
    moves = {}
    for d_k in (16, 64, 256, 1024, 4096):
        sqrt, inv, lr = Fraction(1, math.isqrt(d_k)), Fraction(1, d_k), Fraction(1)
        moves.setdefault("sgd, one rate, 1/sqrt(d_k)", set()).add(sgd(lr, sqrt, d_k))
        moves.setdefault("adam, one rate, 1/d_k", set()).add(adam(lr, inv, d_k))
        moves.setdefault("sgd, muP's rate, 1/d_k", set()).add(sgd(lr * d_k / 16, inv, d_k))
        moves.setdefault("sgd, one rate, 1/d_k", set()).add(sgd(lr, inv, d_k))  # the others
        moves.setdefault("adam, one rate, 1/sqrt(d_k)", set()).add(adam(lr, sqrt, d_k))
    assert [len(v) for v in moves.values()] == [1, 1, 1, 5, 5]  # fixed, fixed, fixed; not


@claim(INTERVIEW, "At its own rate, unscaled is still slower here (the table above). Seed by seed "
                  "at d_k = 256 under SGD it is {learning.paired.sgd.one.256} against "
                  "1/sqrt(d_k).")
def test_at_its_own_rate_the_unscaled_arm_is_slower_at_every_d_k_under_both_optimizers():
    for optimizer in study.OPTIMIZERS.values():
        for d_k in study.D_KS:
            counts = study.pairs(study.steps(study.RESULTS["runs"], optimizer, "1/sqrt(d_k)", d_k),
                                 study.steps(study.RESULTS["runs"], optimizer, "1", d_k))
            p = study.sign_p(*counts[:2])
            assert counts[0] > counts[1] and p < Fraction(5, 100), (optimizer, d_k, counts)
            if (optimizer, d_k) == ("sgd", 256):
                text = study.value(INTERVIEW, "learning.paired.sgd.one.256")
                assert text.startswith(study.count_text(counts) + " (sign test p = ")
                assert study.p_matches(text.rsplit("= ", 1)[1][:-1], p)


def published(optimizer, scale, d_k):
    """[low, high] of an arm's interval in the steps table: the seeds' order statistics
    widened to the medians of the perturbed runs."""
    _, low, high = study.cell(optimizer, scale, d_k)
    medians = [statistics.median(study.ranked(p)) for p in study.perturbed(optimizer, scale, d_k)]
    return min([low] + medians), max([high] + medians)


@claim(INTERVIEW, "In the training experiment, at the initial weights, the 10% of questions with "
                  "the largest gradient carry about half of it at d_k = 256 unscaled (table "
                  "below), and unscaled Adam is still the slowest arm.")
def test_a_tenth_of_the_questions_carry_about_half_and_unscaled_adam_is_the_slowest():
    _, low, high = study.diagnostic("1", 256, "tail_share")
    assert low < 0.5 < high  # about half: the interval holds one half
    for d_k in study.D_KS:  # the slowest: its interval above every other Adam arm's
        slowest = published("adam", "1", d_k)[0]
        assert all(slowest > published("adam", s, d_k)[1] for s in study.SCALES[:-1]), d_k


# ------------------------------------------------------------------ docs/derivations.md

for page, start, test in (
        (DERIVATIONS, "At initialisation 1/d_k makes the logits small (variance 1/d_k), so "
                      "attention starts near uniform; that does not stop it from learning, as "
                      "the training experiment measures",
         "test_the_paper_s_scale_and_mup_s_learn_in_a_handful_of_steps_at_every_d_k"),
        (DERIVATIONS, "the scaled logit of the matched key, c q · k, hardly moves with d_k under "
                      "either scale",
         "test_at_the_re_tuned_rate_and_sgd_the_scaled_logit_stays_within_a_factor_of_two"),
        (DERIVATIONS, "under 1/d_k the query aligns with its key about equally at every d_k, "
                      "while under 1/sqrt(d_k) the alignment falls as d_k grows.",
         "test_under_sgd_1_over_d_k_aligns_equally_and_the_paper_s_scale_less_as_d_k_grows"),
        (DERIVATIONS, "Under Adam at the re-tuned rate, 1/d_k's median scaled logit falls as d_k "
                      "grows, but its intervals at d_k = 16 and 256 overlap.",
         "test_under_adam_1_over_d_k_s_median_falls_but_not_beyond_its_intervals"),
        (DERIVATIONS, "At one fixed rate, d_k = 16's, Adam shows muP's picture: under "
                      "1/sqrt(d_k) the alignment stays about the same and the scaled logit grows "
                      "with d_k.",
         "test_at_one_fixed_rate_adam_shows_mup_s_picture_for_the_paper_s_scale"),
        (DERIVATIONS, "a gradient step moves its logits by a different amount, so it changes the "
                      "effective learning rate (the training experiment's identity makes this "
                      "exact).",
         "test_any_two_scales_are_one_model_with_rescaled_weights_rate_and_adam_s_eps")):
    covered(page, start, by(test))
