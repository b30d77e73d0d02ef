"""Every numeric command-line option reads ASCII decimals only (issue 23).

click's INT/FLOAT/IntRange/FloatRange call int() and float(), which take '١٢', '1_0' and 'nan'
(NaN passes every range check). joulesim's options use cli.number_options' types instead.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from joulesim.cli.main import main
from joulesim.cli.number_options import DecimalRange, IntegerRange

CLICK_NUMBER_TYPES = (click.types.IntParamType, click.types.FloatParamType)
HIDDEN_INTERNAL = {"parent_pid", "ready_fd"}  # set by joulesim itself for its child process


def _commands(group: click.Group, ctx: click.Context, path: str = "joulesim"):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            if command.params:  # a group with options of its own (joulesim slurm -w ... runs itself)
                yield f"{path} {name}", command
            yield from _commands(command, click.Context(command, parent=ctx), f"{path} {name}")
        else:
            yield f"{path} {name}", command


ALL_COMMANDS = list(_commands(main, click.Context(main)))


def test_the_walk_finds_the_commands_with_numeric_options():
    names = {name for name, _ in ALL_COMMANDS}
    assert {"joulesim run", "joulesim simulate", "joulesim learn generate", "joulesim campaign run",
            "joulesim slurm", "joulesim slurm forecast", "joulesim analyze"} <= names


@pytest.mark.parametrize("name, command", ALL_COMMANDS, ids=[name for name, _ in ALL_COMMANDS])
def test_no_numeric_option_uses_clicks_own_number_types(name, command):
    loose = [param.name for param in command.params
             if isinstance(param.type, CLICK_NUMBER_TYPES) and param.name not in HIDDEN_INTERNAL]
    assert loose == [], f"{name}: use DecimalRange/IntegerRange for {loose}"


@pytest.mark.parametrize("text", ["١٢", "1_0", "nan", "inf", "１２", "0x10", ""])
@pytest.mark.parametrize("arguments", [["run", "--timeout"], ["learn", "generate", "-o", "x.csv", "--pairs"],
                                       ["analyze", "out", "--tau"], ["slurm", "-w", "tiny", "--timeout"]])
def test_non_decimal_numbers_are_usage_errors(arguments, text):
    result = CliRunner().invoke(main, [*arguments, text])
    assert result.exit_code == 2 and "Invalid value" in result.output and "Traceback" not in result.output


def test_the_strict_types_are_the_ones_in_use():
    run = dict(ALL_COMMANDS)["joulesim run"]
    types = {param.name: type(param.type) for param in run.params}
    assert types["timeout_s"] is DecimalRange and types["mmax"] is IntegerRange


def test_long_integers_are_read_exactly_and_their_range_is_named():
    """A 19-digit seed is valid (2**63 - 1); longer digit strings name the range they miss."""
    seed = IntegerRange(0, 2 ** 63 - 1)
    assert seed.convert(str(2 ** 63 - 1), None, None) == 2 ** 63 - 1
    for text in (str(2 ** 63), str(10 ** 30)):
        with pytest.raises(click.BadParameter, match=r"is not in the range \[0, 9,223,372,036,854,775,807\]"):
            seed.convert(text, None, None)
    with pytest.raises(click.BadParameter, match="more than 18 digits"):
        seed.convert("9" * 101, None, None)  # beyond what is read exactly: refused unread
