"""The strict number parser every user-given number goes through (protocol/number_text.py):
exactly the ASCII decimal grammar, equal to float() there, nothing of what float()/int() add."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from joulesim.protocol.number_text import MAX_INTEGER_DIGITS, NumberTextError, parse_decimal, parse_integer

# The grammar, written again independently of the module (as docs/reference/reliability.md and the docstring state it).
DIGITS = "0123456789"
GRAMMAR = re.compile(r"[ \t\r\n]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\r\n]*")
INTEGER_GRAMMAR = re.compile(r"[ \t\r\n]*[+-]?[0-9]{1,18}[ \t\r\n]*")

# Texts near the grammar: its own characters plus those float() also takes or nearly takes.
near_alphabet = st.sampled_from(list(DIGITS + "+-.eE _\t\n") + ["inf", "nan", "١", "٢", "５", "²", "\u2003", "\xa0", "x"])
near_texts = st.lists(near_alphabet, max_size=12).map("".join)


def grammar_texts():
    digits = st.text(DIGITS, min_size=1, max_size=25)
    mantissa = st.one_of(digits, st.builds(lambda a, b: f"{a}.{b}", digits, st.text(DIGITS, max_size=25)),
                         digits.map(lambda b: "." + b))
    exponent = st.one_of(st.just(""), st.builds(lambda e, s, d: f"{e}{s}{d}", st.sampled_from("eE"),
                                                st.sampled_from(["", "+", "-"]), st.text(DIGITS, min_size=1, max_size=4)))
    blanks = st.text(" \t\r\n", max_size=2)
    return st.builds(lambda b1, s, m, e, b2: b1 + s + m + e + b2, blanks, st.sampled_from(["", "+", "-"]), mantissa, exponent, blanks)


def with_examples(*texts):
    """hypothesis' @example for each of `texts` (the cases float() and int() get wrong)."""
    def decorate(test):
        for text in reversed(texts):
            test = example(text)(test)
        return test
    return decorate


def float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@given(st.one_of(grammar_texts(), near_texts, st.text(max_size=12)))
@with_examples("1_0", "١٢", "nan", "inf", "1e400", "-1e400", "\u20031")
def test_decimal_accepts_exactly_the_grammar_and_equals_float(text):
    in_grammar = GRAMMAR.fullmatch(text) is not None
    reference = float_or_none(text)
    if in_grammar and reference is not None and math.isfinite(reference):
        assert parse_decimal(text) == reference
        assert math.copysign(1, parse_decimal(text)) == math.copysign(1, reference)  # -0.0 stays -0.0
    else:  # outside the grammar, or an overflow to infinity: refused, with the text in the message
        with pytest.raises(NumberTextError) as info:
            parse_decimal(text)
        assert repr(text[:40]) in str(info.value)
        assert "ASCII decimal number" in str(info.value)


@given(near_texts)
@with_examples("inf", "Infinity", "+INF", "-inf", "nan")
def test_inf_only_when_allowed_and_positive(text):
    body = text.strip(" \t\r\n")
    if body.lower() in ("inf", "+inf", "infinity", "+infinity"):
        assert parse_decimal(text, allow_inf=True) == math.inf
        with pytest.raises(NumberTextError):
            parse_decimal(text)
    elif GRAMMAR.fullmatch(text) is None:
        with pytest.raises(NumberTextError, match="or inf"):
            parse_decimal(text, allow_inf=True)


@pytest.mark.parametrize("text", ["1e400", "-1e400", "1" * 400, "1.8e308"])
def test_overflow_is_refused_even_where_inf_is_allowed(text):
    with pytest.raises(NumberTextError, match="beyond the largest number a double holds"):
        parse_decimal(text, allow_inf=True)


@pytest.mark.parametrize("text", ["١٢", "1_0", "１.５", "²", "nan", "NaN", "inf", "0x10", "1.5.", "", " ", "1 0", "\xa01"])
def test_what_float_takes_but_the_grammar_does_not(text):
    with pytest.raises(NumberTextError):
        parse_decimal(text)


@given(st.one_of(near_texts, st.text(DIGITS + "+- ", max_size=22), st.text(max_size=8)))
@with_examples("١٢", "1_0", "+5", "9" * 19, "0" * 18)
def test_integer_accepts_exactly_the_grammar_and_equals_int(text):
    if INTEGER_GRAMMAR.fullmatch(text):
        assert parse_integer(text) == int(text)
        body = text.strip(" \t\r\n")
        if body[0] in "+-":
            with pytest.raises(NumberTextError, match="non-negative integer"):
                parse_integer(text, signed=False)
        else:
            assert parse_integer(text, signed=False) == int(text)
    else:
        with pytest.raises(NumberTextError):
            parse_integer(text)


def test_integer_digit_bound_comes_before_int():
    assert parse_integer("9" * MAX_INTEGER_DIGITS) == int("9" * MAX_INTEGER_DIGITS)
    with pytest.raises(NumberTextError, match=f"more than {MAX_INTEGER_DIGITS} digits"):
        parse_integer("9" * 5000)  # int() would raise its own ValueError past 4,300 digits


def test_non_text_is_refused_clearly():
    with pytest.raises(NumberTextError, match="not text"):
        parse_decimal(12)  # type: ignore[arg-type]
    with pytest.raises(NumberTextError, match="not text"):
        parse_integer(None)  # type: ignore[arg-type]


def test_long_texts_are_cut_in_messages():
    with pytest.raises(NumberTextError) as info:
        parse_decimal("x" * 100_000)
    assert len(str(info.value)) < 200
