"""Claims read with the rule vocabulary's names alone: a value's own clause names its relation, two entities
of a relation's types share a clause with its name; what is ambiguous, negated or computed is left unread."""
from __future__ import annotations

import pytest

from pipeline.readers.patterns import extract_claims
from pipeline.text.sentences import clause_around
from pipeline.readers.vocabulary import entity_pair_claims, value_claims
from symbolic import load_rulebase
from pipeline_fakes import facts_read, rulebase_of

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
type city "city"
entity city berlin "Berlin"
entity city paris "Paris"
type tier "city tier"
entity tier tier_1 "Tier 1"
entity tier tier_2 "Tier 2"
type person "person"
entity person ann "Ann Lee"
entity person bob "Bob Wu"
type policy "policy"
entity policy travel "travel policy"
relation list_price(p: product, x: money[EUR]) "list price" aka "售价"
relation warranty_period(p: product, d: duration[month]) "robot warranty" aka "质保"
relation battery_warranty(p: product, d: duration[month]) "battery warranty"
relation hotel_limit(t: tier, x: money[EUR]) "hotel limit per night"
relation meal_limit(t: tier, x: money[EUR]) "meal limit per night"
relation city_tier(c: city, t: tier) "city tier" unique
relation reports_to(a: person, b: person) "reports to"
relation mileage_rate(p: policy, x: money[EUR]) "mileage rate"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _values(rb, question, answer):
    return facts_read(value_claims, rb, question, answer)


def _pairs(rb, answer):
    return [str(c.fact) for c in entity_pair_claims(answer, [], rb, [])]


def test_a_clause_ends_at_punctuation_and_conjunctions_and_a_colon_ends_only_what_precedes_it():
    text = "EUR 720: Paris is a Tier 1 city with a limit of EUR 180 per night, so four nights cost more"
    s, e = clause_around(text, 0, 7)
    assert text[s:e] == "EUR 720"
    i = text.index("EUR 180")
    s, e = clause_around(text, i, i + 7)
    assert text[s:e] == text[:text.index(",")]
    zh = "上海是一类城市，住宿标准为每晚 700 元；超出部分自理"
    i = zh.index("700")
    s, e = clause_around(zh, i, i + 5)
    assert zh[s:e] == "住宿标准为每晚 700 元"


def test_a_value_is_read_as_the_relation_its_own_clause_names_about_the_entity_it_names(rb):
    answer = "The AX-200 has a list price of EUR 38,500; its robot warranty is 24 months and the battery warranty 12 months."
    assert _values(rb, "Tell me about the AX-200.", answer) == [
        "list_price(ax_200, 38500 EUR)", "warranty_period(ax_200, 24 months)", "battery_warranty(ax_200, 12 months)"]


def test_the_subject_comes_from_the_clause_else_the_sentence_else_the_question(rb):
    assert _values(rb, "What about the LX-500?", "Its list price is EUR 52,000.") == ["list_price(lx_500, 52000 EUR)"]
    assert _values(rb, "What about robots?", "The LX-500 ships today, at a list price of EUR 52,000.") == [
        "list_price(lx_500, 52000 EUR)"]
    # two products and none in the value's clause: whose price it is, names do not say
    assert _values(rb, "Compare the AX-200 and the LX-500.", "Both are robots; the list price is EUR 52,000.") == []
    # the type's only entity needs no naming
    assert _values(rb, "What do I get per km?", "The mileage rate is EUR 0.35.") == ["mileage_rate(travel, 0.35 EUR)"]


def test_the_one_entity_the_kb_states_a_relation_of_settles_a_choice_of_subjects(rb):
    from pipeline.readers.patterns import extract_claims
    from pipeline.question.focus import parse_question

    def read(question, answer, implied):
        _claims, mentions = extract_claims(answer, [], rb)
        focus = parse_question(question, rb, implied=implied)
        return [str(c.fact) for c, _m in value_claims(answer, mentions, focus, rb)]

    q, answer = "Compare the AX-200 and the LX-500.", "Both are robots; the list price is EUR 52,000."
    assert read(q, answer, {}) == []
    # the documents state a list price of the LX-500 alone: of the two named, it is the one
    assert read(q, answer, {("list_price", 0): "lx_500"}) == ["list_price(lx_500, 52000 EUR)"]
    # an entity the answer's own clause names is never overridden, nor one the KB's facts do not name
    assert read(q, "The AX-200's list price is EUR 52,000.", {("list_price", 0): "lx_500"}) == [
        "list_price(ax_200, 52000 EUR)"]
    assert read("Compare the AX-200 and the LX-500.", answer, {("warranty_period", 0): "lx_500"}) == []
    # and a question naming no product: the KB's one product with a list price
    assert read("What does it cost?", "The list price is EUR 52,000.", {("list_price", 0): "lx_500"}) == [
        "list_price(lx_500, 52000 EUR)"]


def test_a_question_asking_two_things_is_two_lookups_not_a_computation(tmp_path):
    rb = rulebase_of("""
type city "city"
entity city berlin "Berlin" aka "柏林"
type tier "city tier"
entity tier tier_2 "Tier 2"
relation city_tier(c: city, t: tier) "city tier" unique
relation night_cap(t: tier, x: money[EUR]) "hotel limit per night"
""", tmp_path)
    # "hotel limit" is two thirds of "hotel limit per night": enough in a lookup, not where the question states
    # a value of its own (a figure computed from it could be named so)
    answer = "Berlin is a Tier 2 city; the Tier 2 hotel limit is EUR 140."
    assert _values(rb, "Which tier is Berlin? What is the Tier 2 hotel limit?", answer) == ["night_cap(tier_2, 140 EUR)"]
    assert _values(rb, "柏林属于哪一类城市？Tier 2 的 hotel limit 是多少？", "柏林是 Tier 2 城市；Tier 2 的 hotel limit 为 EUR 140。") == [
        "night_cap(tier_2, 140 EUR)"]
    assert _values(rb, "How much over budget is a EUR 170 room in Tier 2?", answer) == []


def test_a_name_further_than_three_words_after_the_value_qualifies_nothing(rb):
    assert _values(rb, "What about the AX-200?", "It is 24 months, which is longer than the robot warranty.") == []


def test_no_reading_when_two_relations_fit_equally_or_a_name_is_half_there(rb):
    # "limit per night" is two thirds of both the hotel and the meal limit's names
    assert _values(rb, "What about Tier 1?", "In Tier 1 the limit per night is EUR 180.") == []
    assert _values(rb, "What about Tier 1?", "In Tier 1 the hotel limit per night is EUR 180.") == [
        "hotel_limit(tier_1, 180 EUR)"]
    assert _values(rb, "What about the AX-200?", "The AX-200 price is EUR 38,500.") == []   # half of "list price"


def test_negated_values_values_from_the_question_and_computed_totals_are_not_read(rb):
    assert _values(rb, "What about the AX-200?", "The AX-200's list price is not EUR 40,000.") == []
    assert _values(rb, "Is the AX-200's list price EUR 40,000?", "Yes, the list price is EUR 40,000.") == []
    # a computing question: a result clause that names only part of a relation is not read as that relation
    q = "What do 3 nights in Tier 1 cost?"
    assert _values(rb, q, "In Tier 1, three nights at the limit per night cost EUR 540.") == []
    assert _values(rb, q, "EUR 540: the hotel limit per night in Tier 1 is EUR 180.") == ["hotel_limit(tier_1, 180 EUR)"]
    # a total word before the value makes it the total, whatever relation its clause names whole
    assert _values(rb, q, "The hotel limit per night in Tier 1 is EUR 180.") == ["hotel_limit(tier_1, 180 EUR)"]
    assert _values(rb, q, "The hotel limit per night in Tier 1 in total is EUR 540.") == []
    assert _values(rb, "在 Tier 1 住 3 晚一共能报多少？", "Tier 1 的 hotel limit per night 一共是 EUR 540。") == []
    # a rate said per a unit right after it is no total: read as any value, by two thirds of a name; the
    # total after it is not per night ("per night" belongs to the rate before it) and stays unread
    assert _values(rb, q, "Three nights at the Tier 1 hotel rate of EUR 180 per night come to EUR 540.") == [
        "hotel_limit(tier_1, 180 EUR)"]


def test_a_value_the_documents_state_is_read_in_an_answer_to_a_question_stating_values(rb):
    from dataclasses import replace
    from pipeline.question.focus import parse_question
    from symbolic.values import parse_value

    def read(question, answer, documented):
        _claims, mentions = extract_claims(answer, [], rb)
        focus = replace(parse_question(question, rb), documented=documented)
        return [str(c.fact) for c, _m in value_claims(answer, mentions, focus, rb)]

    q = "My AX-200 is 10 months old and its battery died. Is it covered?"
    answer = "Yes: the robot warranty is 24 months, and its battery is covered for 12 months."
    twelve, twenty_four = parse_value("12 months"), parse_value("24 months")
    # the whole name is read as ever; half of one, named alone, only where the documents state the value for it
    assert read(q, answer, {}) == ["warranty_period(ax_200, 24 months)"]
    assert read(q, answer, {"battery_warranty": (("ax_200", twelve),)}) == [
        "warranty_period(ax_200, 24 months)", "battery_warranty(ax_200, 12 months)"]
    assert read(q, answer, {"battery_warranty": (("ax_200", twenty_four),)}) == ["warranty_period(ax_200, 24 months)"]
    # a computed total is stated by no document: unread though its clause names half a relation
    q = "What do 3 nights in Tier 1 cost?"
    assert read(q, "In Tier 1, three nights at the limit per night cost EUR 540.", {}) == []
    assert read(q, "In Tier 1, three nights at the limit per night cost EUR 540.",
                {"hotel_limit": (("tier_1", parse_value("EUR 180")),)}) == []


def test_two_thirds_of_a_name_beside_another_relations_words_is_no_lookup():
    """Shipped con-12 (0.5B): the manager approving reports within 30 days is no submission deadline, though the
    documents state 30 days for it; the deadline named by its label is read."""
    from dataclasses import replace
    from pathlib import Path
    from pipeline.question.focus import parse_question
    from symbolic.values import parse_value

    shipped = load_rulebase(Path(__file__).resolve().parents[1] / "rules")
    q = "My trip ended in March 2025 and I submitted the expense report 45 days later. Will it be reimbursed?"
    focus = replace(parse_question(q, shipped), documented={"expense_submission_deadline": (("travel_policy", parse_value("30 days")),)})

    def read(answer):
        _claims, mentions = extract_claims(answer, [], shipped)
        return [str(c.fact) for c, _m in value_claims(answer, mentions, focus, shipped)]

    assert read("No, it will not be reimbursed. The context states that the manager will approve every expense "
                "report within 30 days after the end of the trip. [1]") == []
    assert read("No. The expense report deadline is 30 days after the end of the trip.") == [
        "expense_submission_deadline(travel_policy, 30 days)"]


def test_two_entities_of_a_relations_types_in_one_clause_with_its_name(rb):
    assert _pairs(rb, "Berlin is a Tier 2 city, so the hotel limit is EUR 140.") == ["city_tier(berlin, tier_2)"]
    assert _pairs(rb, "Paris, like every city in the EU, has a hotel limit; Tier 1 applies to London.") == []
    assert _pairs(rb, "Paris is not a Tier 2 city.") == []
    assert _pairs(rb, "Paris and Tier 2 are mentioned here.") == []           # no name of the relation
    assert _pairs(rb, "Ann Lee reports to Bob Wu.") == []                     # same-typed: direction unknown


def test_a_copula_alone_says_the_types_only_relation(rb):
    # "city tier" is not named, but only "is a" stands between a city and a tier, which one relation links
    assert _pairs(rb, "Paris is a Tier 1 city.") == ["city_tier(paris, tier_1)"]
    assert _pairs(rb, "Berlin是Tier 2城市。") == ["city_tier(berlin, tier_2)"]
    assert _pairs(rb, "Paris hosts fairs; Tier 1 is expensive.") == []    # no copula, no name
    assert _pairs(rb, "Tier 1 is Paris.") == []                           # object before subject: no reading
    assert _pairs(rb, "Paris is not a Tier 1 city.") == []


def test_a_copula_says_the_one_unique_relation_where_the_types_have_several(tmp_path):
    rb = rulebase_of("""type person "person"
entity person liu "Liu Mingxuan"
type title "title"
entity title gm "General Manager"
relation person_title(p: person, t: title) "title" unique
relation deputy_for(p: person, t: title) "deputises for"
""", tmp_path)
    assert _pairs(rb, "Liu Mingxuan is General Manager.") == ["person_title(liu, gm)"]
    assert _pairs(rb, "Liu Mingxuan deputises for the General Manager.") == ["deputy_for(liu, gm)"]
    assert _pairs(rb, "Liu Mingxuan met the General Manager.") == []     # no copula, no name
    # two unique relations of the types: the copula says neither
    (tmp_path / "two").mkdir()
    two = rulebase_of("""type person "person"
entity person liu "Liu Mingxuan"
type title "title"
entity title gm "General Manager"
relation person_title(p: person, t: title) "title" unique
relation former_title(p: person, t: title) "former title" unique
""", tmp_path / "two")
    assert _pairs(two, "Liu Mingxuan is General Manager.") == []


def test_a_place_said_of_the_subject_says_the_types_only_relation(tmp_path):
    rb = rulebase_of("""type person "person"
entity person reid "Callum Reid"
entity person nair "Priya Nair"
entity person zhang "张伟"
type grade "grade"
entity grade hg8 "HG8"
type campus "campus"
entity campus glasgow "Glasgow"
entity campus chengdu "成都车场"
relation person_campus(p: person, c: campus) "campus" unique
relation person_grade(p: person, g: grade) "grade" unique
""", tmp_path)
    assert _pairs(rb, "Callum Reid is grade HG8 in Glasgow.") == ["person_grade(reid, hg8)", "person_campus(reid, glasgow)"]
    assert _pairs(rb, "Callum Reid works at the Glasgow site.") == ["person_campus(reid, glasgow)"]
    assert _pairs(rb, "张伟在成都车场工作。") == ["person_campus(zhang, chengdu)"]
    # the place of another verb's object, or of the nearer person, is not the subject's
    assert _pairs(rb, "Priya Nair reports to the Research Committee in Glasgow.") == []
    assert _pairs(rb, "Priya Nair is deputy to Callum Reid in Glasgow.") == []
    assert _pairs(rb, "Callum Reid is not in Glasgow.") == []


def test_the_objects_name_qualifying_the_subjects_says_the_types_only_relation(rb):
    assert _pairs(rb, "Tier 1 Paris 的酒店上限为 EUR 180。") == ["city_tier(paris, tier_1)"]
    assert _pairs(rb, "Tier 2 的 Berlin 住宿标准更低。") == ["city_tier(berlin, tier_2)"]
    assert _pairs(rb, "Tier 1 比 Paris 更贵。") == []          # a word between: no qualifying
    assert _pairs(rb, "Paris Tier 1") == []                   # the subject first is no qualifier of it
    # two products of one type are no pair; a type pair with two relations needs a name (list price, warranty…)
    assert _pairs(rb, "AX-200 LX-500") == []


def test_a_pair_a_pattern_already_read_is_not_read_again(rb):
    from symbolic import Claim, Fact
    taken = [Claim(Fact("city_tier", ("berlin", "tier_2")), "Berlin is a Tier 2 city", 0, 23)]
    assert entity_pair_claims("Berlin is a Tier 2 city.", [], rb, taken) == []


def test_chinese_names_read_in_chinese_clauses(rb):
    assert _values(rb, "AX-200 的质保期是多久？", "AX-200 的质保为 24 个月。") == ["warranty_period(ax_200, 24 months)"]


def test_a_verb_says_the_compound_noun_it_starts(rb):
    from pipeline.readers.vocabulary import name_score
    runtime = type("Sig", (), {"label": "runtime per charge", "aliases": (), "name": "battery_runtime"})()
    assert name_score(runtime, frozenset({"run", "charge"})) == 1.0          # "runs ... per charge"
    assert name_score(runtime, frozenset({"ru", "charge"})) == 0.5           # two letters say nothing
    assert name_score(runtime, frozenset({"runtimer", "charge"})) == 0.5     # longer is not a prefix
    assert name_score(runtime, frozenset({"时间"})) == 0.0


def test_a_runtime_read_from_runs(tmp_path):
    (tmp_path / "r.rules").write_text('type product "product"\nentity product lx_500 "LX-500"\n'
                                      'relation battery_runtime(p: product, d: duration[hour]) "runtime per charge"\n'
                                      'relation battery_warranty(p: product, d: duration[month]) "battery warranty"\n',
                                      encoding="utf-8")
    rb = load_rulebase(tmp_path)
    assert _values(rb, "How long does it run?", "The LX-500 runs for up to 8 hours per charge.") == [
        "battery_runtime(lx_500, 8 hours)"]
    assert _values(rb, "How long does it run?", "The LX-500 runs well; 8 hours are needed to charge it.") == []


NARY = """
type grade "grade"
entity grade k3 "K3"
entity grade k4 "K4"
type site "site"
entity site rotterdam "Rotterdam"
entity site ningbo "Ningbo"
relation purchase_limit(g: grade, s: site, x: money[EUR]) "purchase approval limit"
"""


def test_relations_of_more_arguments_find_each_of_its_own_type(tmp_path):
    (tmp_path / "r.rules").write_text(NARY, encoding="utf-8")
    rb = load_rulebase(tmp_path)
    assert _values(rb, "What may a K4 buy?", "In Rotterdam the purchase approval limit of K4 is EUR 10,000.") == [
        "purchase_limit(k4, rotterdam, 10000 EUR)"]
    # the site comes from the question when the answer does not name it
    assert _values(rb, "What may K4 buy in Ningbo?", "The K4 purchase approval limit is EUR 5,000.") == [
        "purchase_limit(k4, ningbo, 5000 EUR)"]
    # no site anywhere and two in the rules: whose limit it is, names do not say
    assert _values(rb, "What may K4 buy?", "The K4 purchase approval limit is EUR 5,000.") == []


def test_the_focus_reads_relations_of_more_arguments(tmp_path):
    from pipeline.readers.focus import focus_claims
    (tmp_path / "r.rules").write_text(NARY, encoding="utf-8")
    rb = load_rulebase(tmp_path)

    def read(q, a):
        return facts_read(focus_claims, rb, q, a)
    q = "What is the purchase approval limit of K4 in Ningbo?"
    assert read(q, "It is EUR 5,000.") == ["purchase_limit(k4, ningbo, 5000 EUR)"]
    assert read(q, "In Rotterdam it is EUR 10,000.") == []          # the sentence names another site


def test_an_alternative_after_or_is_not_the_value_of_the_name_before_it(rb):
    q = "How long is a replaced part of the AX-200 covered?"
    assert _values(rb, q, "The part is covered for the AX-200's remaining robot warranty or 3 months.") == []
    assert _values(rb, q, "零件保修为整机剩余质保或 3 个月。") == []
    # the value before "or" keeps its clause
    assert _values(rb, q, "The AX-200's robot warranty is 24 months or more.") == ["warranty_period(ax_200, 24 months)"]


def test_a_value_alone_in_brackets_is_read_with_the_words_before_them(rb):
    assert _values(rb, "What about the LX-500?", "The LX-500's list price (EUR 52,000) excludes VAT.") == [
        "list_price(lx_500, 52000 EUR)"]
    assert _values(rb, "What about the LX-500?", "The LX-500 has a battery warranty（18 个月）.") == [
        "battery_warranty(lx_500, 18 months)"]
    # a bracket that says more is a clause of its own: the words before it qualify nothing there
    assert _values(rb, "What about the LX-500?", "The LX-500 has a list price (set in 2024 at EUR 52,000).") == []


def test_a_name_said_without_the_words_qualifying_another_means_the_broader_relation(tmp_path):
    rb = rulebase_of(RULES + 'relation payload(p: product, m: quantity[kg]) "rated payload"\n'
                     'relation rated_payload(p: product, m: quantity[kg]) "rated payload of the datasheet"\n', tmp_path)
    # "rated payload" is all of both names (the second's id words): the unqualified one is meant
    assert _values(rb, "What about the AX-200?", "The rated payload for AX-200 is 200 kg.") == ["payload(ax_200, 200 kg)"]
    assert _values(rb, "What about the AX-200?", "The datasheet's rated payload for AX-200 is 200 kg.") == [
        "rated_payload(ax_200, 200 kg)"]


def test_the_questions_value_said_of_another_entity_is_read(rb):
    q = "Why does the AX-200 cost EUR 52,000 while the LX-500 costs EUR 38,500?"
    assert _values(rb, q, "It does not: the list price of the AX-200 is EUR 38,500.") == ["list_price(ax_200, 38500 EUR)"]
    assert _values(rb, q, "The list price of the LX-500 is EUR 38,500.") == []    # the question's own premise


def test_of_two_patterns_reading_one_value_the_relation_its_span_names_best_is_kept(tmp_path):
    from pipeline.readers.vocabulary import best_named_claims
    rb = rulebase_of(RULES + 'pattern P_ANY: "{product} ... warranty is {d:duration}" -> warranty_period(product, d)\n'
                     'pattern P_BAT: "{product} ... battery warranty is {d:duration}" -> battery_warranty(product, d)\n',
                     tmp_path)
    claims, _m = extract_claims("The AX-200 battery warranty is 12 months.", [], rb)
    assert sorted(c.fact.relation for c in claims) == ["battery_warranty", "warranty_period"]
    assert [str(c.fact) for c in best_named_claims(claims, rb)] == ["battery_warranty(ax_200, 12 months)"]
    # one pattern alone, or two values: nothing to choose between
    claims, _m = extract_claims("The AX-200 robot warranty is 24 months.", [], rb)
    assert [str(c.fact) for c in best_named_claims(claims, rb)] == ["warranty_period(ax_200, 24 months)"]


def test_the_words_a_pattern_requires_name_its_relation(tmp_path):
    from pipeline.readers.vocabulary import pattern_names
    rb = rulebase_of(RULES + 'relation min_load(p: product, m: quantity[kg]) "minimum load setting"\n'
                     'pattern P_ZH: "{product} ... 最低 载重 [为|是] {m:quantity}" -> min_load(product, m)\n'
                     'pattern P_ONE: "{product} ... carries (only|just) {m:quantity}" -> min_load(product, m)\n'
                     'pattern P_RE: re"{product}\\s*\\|\\s*{m:quantity}" -> min_load(product, m)\n', tmp_path)
    # optional and alternative parts, placeholders, gaps and regex patterns are no required words; one term
    # names too little
    assert pattern_names(rb)["min_load"] == ["最低 载重"]
    # the pattern itself does not match ("只有" is not "为|是"); its words still name the relation
    assert _values(rb, "LX-500 呢？", "LX-500 最低载重只有 50 公斤。") == ["min_load(lx_500, 50 kg)"]
    assert _values(rb, "What about the LX-500?", "The LX-500 carries only 50 kg.") == []


def test_the_questions_value_given_to_the_entity_of_its_own_clause_is_an_echo(rb):
    # the question gives EUR 38,500 to the LX-500; the answer restates that, about the LX-500: not read
    q = "Why does the AX-200 cost EUR 52,000 while the LX-500 costs EUR 38,500?"
    assert _values(rb, q, "The LX-500's list price is EUR 38,500.") == []
    # a relation of a type the question's clause names none of: the question's value echoed, not read
    assert _values(rb, "Is EUR 38,500 the usual figure?", "The mileage rate is EUR 38,500.") == []


def test_a_hyphenated_value_is_read_as_the_relation_its_head_noun_names(tmp_path):
    # "a 24-month warranty": the phrase after the value is what it measures; half the name is enough there,
    # and the shorter name wins where the longer one's extra word ("battery") is not said
    rb = rulebase_of("""
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
relation warranty_period(p: product, d: duration[month]) "robot warranty"
relation battery_warranty_period(p: product, d: duration[month]) "battery warranty"
""", tmp_path)
    assert _values(rb, "How long is the AX-200 covered?", "The AX-200 has a 24-month warranty.") == [
        "warranty_period(ax_200, 24 months)"]
    assert _values(rb, "How long is the LX-500 covered?", "The LX-500 comes with an 18-month battery warranty.") == [
        "battery_warranty_period(lx_500, 18 months)"]
    # the head noun must be a word of the name: a "24-month extension" or "24-month robot lease" is no warranty
    assert _values(rb, "How long is the AX-200 covered?", "The AX-200 has a 24-month extension.") == []
    assert _values(rb, "How long is the AX-200 covered?", "The AX-200 has a 24-month robot lease.") == []
    # a value not written as a modifier needs its clause's two thirds, as before
    assert _values(rb, "How long is the AX-200 covered?", "The AX-200 has a warranty: 24 months.") == []


def test_an_inflected_word_does_not_say_the_name(tmp_path):
    rb = rulebase_of("""
type policy "policy"
entity policy travel "travel policy"
relation expense_submission_deadline(p: policy, d: duration[day]) "expense report deadline"
""", tmp_path)
    # "reported" would say "report" and "Dead" the start of "deadline": two thirds of a name about something else
    answer = "Dead on arrival: a product that does not work must be reported within 7 days of delivery."
    assert facts_read(value_claims, rb, "Within how many days must it be reported?", answer) == []
