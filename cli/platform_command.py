"""`joulesim platform export-xml FILE.json`: a native JSON platform as SimGrid XML (for Batsim)."""

from __future__ import annotations

import os

import click

from joulesim.cli.error_reporting import reports_errors


@click.group()
def platform() -> None:
    """Platform files: convert joulesim's JSON platforms to SimGrid XML."""


@platform.command("export-xml")
@click.argument("json_file", metavar="FILE.json")
@click.option("-o", "--output", metavar="FILE.xml", help="Where to write the XML (default: standard output).")
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
@reports_errors
def export_xml_command(json_file: str, output: str | None, force: bool) -> None:
    """Write FILE.json (a platform of hosts and clusters) as the SimGrid XML that describes the
    same platform: joulesim runs both alike, and SimGrid and Batsim 4.2.1 load the XML."""
    from joulesim.inputs.output_file import refuse_non_regular_file, write_whole
    from joulesim.protocol.errors import JoulesimError
    from joulesim.simulator.platform.platform_xml_export import export_xml

    text = export_xml(json_file)
    if output is None:
        click.echo(text, nl=False)
        return
    # A device or FIFO is refused, with or without --force (the rename would replace it).
    refuse_non_regular_file(output, "output (-o)", special_fix="give the path of a regular file, or leave out -o "
                            "to print the XML on standard output")
    if os.path.exists(output) and not force:
        raise JoulesimError(f"{output}: exists already; give --force to replace it, or another -o")

    def write(path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)

    write_whole(output, "output (-o)", write)  # never a half-written XML file
    click.echo(f"wrote {output}", err=True)
