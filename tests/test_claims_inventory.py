"""The inventory of the claims, tests/CLAIMS.md: up to date with the claims test files, every
test it names real, every quote it lists found in its page, and the helpers of
tests/claims.py doing what they say."""

import os
import re

import pytest

from tests import claims
from tests.claims import CLAIMS, Claim, find, inventory, normalise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def written():
    text = inventory()  # imports every tests/test_claims_*.py, registering their claims
    return text, list(CLAIMS)


def test_the_inventory_is_what_python3_m_tests_claims_writes(written):
    with open(claims.INVENTORY, encoding="utf-8") as f:
        assert f.read() == written[0], "out of date: run python3 -m tests.claims"


def test_every_test_the_inventory_names_exists(written):
    for c in written[1]:
        if c.kind != "test":
            continue
        path, name = c.by.split("::")
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            assert re.search(rf"^def {name}\(", f.read(), re.M), c.by


def test_every_claim_is_found_in_its_page(written):
    for c in written[1]:
        find(c.page, c.quote)


def test_every_page_has_its_count_and_the_counts_add_up(written):
    text, listed = written
    rows = dict(re.findall(r"^\| ([\w/.-]+(?: [\w.]+)?) \| (\d+) \|", text, re.M))
    for page in claims.PAGES:
        assert int(rows[page]) == sum(c.page == page for c in listed), page
    assert int(rows["all"]) == len(listed)
    assert len({(c.page, c.quote, c.by) for c in listed}) == len(listed)  # no row twice


def test_a_quote_is_matched_across_lines_and_markers_and_a_rewording_fails():
    assert normalise("a\n  b <!--v:x.1-->3 ± 1<!--/v--> c") == "a b {x.1} c"
    assert normalise("x\n<!--begin:t-->\n| 1 |\n<!--end:t-->\ny") == "x {block t} y"
    find("README.md", "Attention(Q, K, V) = softmax(Q K^T /\n   sqrt(d_k)) V")
    with pytest.raises(AssertionError, match="README.md no longer says 'Attention\\(Q, K, V\\) "
                                             "= softmax\\(K Q'; nearest: "):
        find("README.md", "Attention(Q, K, V) = softmax(K Q")


def test_a_claims_test_finds_its_quote_before_it_runs():
    ran = []

    @claims.claim("README.md", "no such sentence in the README")
    def test_nothing():
        ran.append(True)

    claims.CLAIMS.pop()  # registered by the decorator above: not a claim of the project
    with pytest.raises(AssertionError, match="no longer says"):
        test_nothing()
    assert ran == []


def test_the_margins_are_z_standard_errors_of_the_difference():
    assert claims.apart(5.0, 3.0, 1.0, 4.0) == 4.0 / 5.0
    assert claims.within(10.0, 1.0, 10.0 + 3 * 2 ** 0.5, 1.0)
    assert not claims.within(10.0, 1.0, 10.0 + 3.01 * 2 ** 0.5, 1.0)
    assert claims.rising([(1.0, 0.1), (2.0, 0.1)]) and not claims.rising([(1.0, 0.1),
                                                                          (1.4, 0.1)])
    assert claims.falling([(2.0, 0.1), (1.0, 0.1)]) and claims.level([(1.0, 0.1), (1.4, 0.1)])


def test_an_unknown_page_is_refused():
    with pytest.raises(ValueError, match="'docs/nowhere.md' is not one of PAGES"):
        claims.source("docs/nowhere.md", "x", "y")
    assert Claim._fields == ("page", "quote", "kind", "by")
