"""The report template's two constructs, for scaling_report.py: `${name}` values and
`[% if name %]...[% end %]` blocks."""
import re
import string

IF_BLOCK = re.compile(r"\[% if (\w+) %\]((?:(?!\[% if ).)*?)\[% end %\]", re.S)


def render(template, values):
    """Fills `${name}` from values; `[% if name %]...[% end %]` keeps its text only when name is
    among values (blocks nest; a block of whole lines ends with `[% end %]` at the start of the
    line after it)."""
    while True:
        text = IF_BLOCK.sub(lambda m: m.group(2) if m.group(1) in values else "", template)
        if text == template:
            break
        template = text
    return string.Template(template).substitute(values)
