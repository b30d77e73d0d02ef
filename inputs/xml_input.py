"""Reading an XML input (SimGrid platforms, DAX workflows) safely: defusedxml refuses entities
and external references (billion laughs, XXE); a DOCTYPE naming a DTD is fine (not fetched)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from joulesim.inputs.input_error import InputError


def parse_xml(path: str, data: bytes) -> ET.Element:
    """The root element of an XML document, read by defusedxml (InputError on bad XML).

    defusedxml's parser with the C TreeBuilder: the elements are the fast C ones, whose
    iter() walks deep trees without recursing."""
    parser = DefusedXMLParser(target=ET.TreeBuilder())
    # Blank lines before the XML declaration: SimGrid reads such files (Batsim 5 ships
    # platforms/cluster_energy_128.xml so), expat refuses them. Dropped, lines still counted.
    skipped = 0
    if data[:1].isspace() and data.lstrip(b" \t\r\n").startswith(b"<?xml"):
        stripped = data.lstrip(b" \t\r\n")
        skipped, data = data[: len(data) - len(stripped)].count(b"\n"), stripped
    try:
        parser.feed(data)
        return parser.close()
    except ET.ParseError as e:
        line, col = e.position
        line += skipped
        raise InputError(path, f"line {line}, column {col + 1}", "malformed XML: " + re.sub(r": line \d+, column \d+$", "", str(e)),
                         "fix the XML syntax (unclosed tag, bad quote, stray '&'...)") from None
    except DefusedXmlException as e:
        name = getattr(e, "name", None)
        what = f"<!ENTITY {name}>" if name else "DTD"
        raise InputError(path, what, f"declares an XML entity or external reference, which joulesim refuses ({type(e).__name__})",
                         'remove the entity declarations from the DOCTYPE (a SimGrid platform keeps at most <!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">)') from None
    except (LookupError, ValueError) as e:  # an encoding="..." that Python does not know or expat cannot read
        raise InputError(path, "line 1", f"unreadable XML: {e}", 'save the file as UTF-8 with <?xml version="1.0"?>') from None
