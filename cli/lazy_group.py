"""A click group whose subcommands are imported only when used.

`joulesim decide` starts a decider process per run: it must not pay for importing pandas
or matplotlib, which only `analyze`, `plot` and the workload tools need.
"""

from __future__ import annotations

import importlib

import click


class LazyGroup(click.Group):
    def __init__(self, *args, lazy_commands: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})  # name -> "module:attribute"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy_commands:
            module, _, attribute = self.lazy_commands[name].partition(":")
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, name)
