"""`verirag rules test`: a rule author's YAML cases, the shipped default-domain suite, bad test files."""
import json
from pathlib import Path

import pytest

from api.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLAIMGOALS = Path(__file__).parent / "fixtures" / "rules" / "claimgoals"


def test_the_default_rules_pass_their_suite(capsys):
    # >= 20 constraints, a satisfying claim supported by the sample KB's facts and a violating one each
    assert main(["rules", "test", str(ROOT / "rules" / "tests"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] == 0 and out["passed"] >= 40
    cases = out["cases"]
    flagged = {c["rule"] for c in cases if c["expect"] == "violates_rule"}
    assert len(flagged) >= 20
    assert sum(c["expect"] == "supported" for c in cases) >= 20


def write(tmp_path, text):
    (tmp_path / "t.yaml").write_text(text, encoding="utf-8")
    return str(tmp_path / "t.yaml")


def test_relation_claims_hand_facts_and_a_failure_table(tmp_path, capsys):
    f = write(tmp_path, f"""rules: {CLAIMGOALS}
cases:
  - name: within the limit
    claim: {{relation: can_approve, args: [amy, "EUR 3000"]}}
    facts: [{{relation: grade_of, args: [amy, G3], cf: 0.8}}]
    expect: supported
    rule: G_APPROVE
    cf: 0.72
  - name: above the limit, wrongly expected
    claim: {{relation: can_approve, args: [amy, "EUR 9000"]}}
    facts: ["grade_of(amy, g3)"]
    expect: supported
""")
    assert main(["rules", "test", f]) == 1
    out = capsys.readouterr().out
    assert "PASS  within the limit" in out and "got supported [G_APPROVE] CF 0.72" in out
    assert "FAIL  above the limit, wrongly expected" in out and "got contradicted [G_APPROVE_NOT] CF 1.00" in out
    assert f"{f}:9" in out                      # where the failing case is written
    assert out.rstrip().splitlines()[-1].startswith("1 passed, 1 failed in ")


@pytest.mark.parametrize("body, message", [
    ("cases:\n  - {name: x, claim: y}\n", ":3:1: case 1 needs `expect`"),
    ("cases:\n  - {name: x, claim: y, expect: maybe}\n", "expect is one of supported, contradicted"),
    ("cases:\n  - {name: x, claim: y, expect: supported, rulez: R}\n", "unknown key(s) rulez"),
    ("cases: [\n", "not valid YAML"),
    ("claims: []\n", "a rule test file has `cases:`"),
    # issue 48: `kb: true` was a traceback; with no file-level KB to mean, it is a located error
    ("cases:\n  - {name: x, claim: y, expect: supported, kb: true}\n",
     ":3:1: case 1: kb: true means the file's kb:, and this file gives none"),
    ("kb: 3\ncases:\n  - {name: x, claim: y, expect: supported}\n", ":1:1: kb is a KB folder"),
])
def test_bad_test_files_are_located(tmp_path, capsys, body, message):
    f = write(tmp_path, f"rules: {CLAIMGOALS}\n" + body)
    assert main(["rules", "test", f]) == 2
    err = capsys.readouterr().err
    assert message in err and f in err


def test_bad_facts_in_a_case_fail_it_with_a_location(tmp_path, capsys):
    f = write(tmp_path, f"""rules: {CLAIMGOALS}
cases:
  - name: typo
    claim: {{relation: can_approve, args: [amy, "EUR 3000"]}}
    facts:
      - {{relation: grade_off, args: [amy, g3]}}
    expect: supported
""")
    assert main(["rules", "test", f]) == 1
    out = capsys.readouterr().out
    assert f"{f}:6:1: unknown relation 'grade_off' (did you mean 'grade_of'?)" in out


def test_explain_a_claim_against_the_kb(capsys):
    rules, kb = str(ROOT / "rules"), str(ROOT / "kb")
    assert main(["rules", "explain", "--claim", "The hotel limit in London is EUR 200 per night.",
                 "--rules", rules, "--kb", kb]) == 1
    out = capsys.readouterr().out
    assert out.startswith("hotel_limit_for_city(london, 200 EUR): violates_rule (CF 1.00) [TRV_CITY_HOTEL_CAP]")
    assert main(["rules", "explain", "--claim", "hotel_limit_for_city(london, \"EUR 180\")",
                 "--rules", rules, "--kb", kb, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["claims"][0]["verdict"] == "supported" and "G_CITY_HOTEL" in got["claims"][0]["rule_ids"]


def test_explain_a_claim_shows_why_goals_were_asked(tmp_path, capsys):
    assert main(["rules", "explain", "--claim", "can_approve(amy, \"EUR 3000\")", "--rules", str(CLAIMGOALS)]) == 1
    out = capsys.readouterr().out
    # issue 48: an unsupported verdict printed "(CF 1.00)", read as strong support
    assert "can_approve(amy, 3000 EUR): unsupported (no support above CF 0.20)" in out and "CF 1.00" not in out
    assert "WHY (goals asked but not proved):" in out and "asked because rule G_APPROVE needs it" in out
    assert main(["rules", "explain", "--rules", str(CLAIMGOALS)]) == 2     # neither a goal nor --claim


def test_kb_true_in_a_case_reads_the_files_kb(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "grades.md").write_text("# Grades\n\nAmy is grade G3.\n", encoding="utf-8")
    f = write(tmp_path, f"""rules: {CLAIMGOALS}
kb: kb
cases:
  - name: with the file's KB
    claim: {{relation: can_approve, args: [amy, "EUR 3000"]}}
    kb: true
    expect: unsupported
""")
    assert main(["rules", "test", f]) in (0, 1)
    out = capsys.readouterr().out
    assert "with the file's KB" in out and "Traceback" not in out


def test_why_lists_no_failed_top_level_ask_for_a_supported_claim(capsys):
    # issue 48: WHY listed "asked because you asked it … not proved" under a claim the verdict supports
    rules, kb = str(ROOT / "rules"), str(ROOT / "kb")
    assert main(["rules", "explain", "--claim", "hotel_limit_for_city(london, \"EUR 180\")",
                 "--rules", rules, "--kb", kb]) == 0
    out = capsys.readouterr().out
    assert out.startswith("hotel_limit_for_city(london, 180 EUR): supported (CF 1.00)")
    assert "asked because you asked it" not in out
