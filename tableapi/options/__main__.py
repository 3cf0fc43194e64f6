"""``python -m tableapi.options > docs/options.md``: the options reference, written from the
options' declarations (:mod:`tableapi.options`): one table per scope, ``TableConfig``'s, each
connector's, the LOOKUP hint's. ``tests/unit/test_options.py`` fails when the file is stale.

Example::

    >>> reference().splitlines()[0]
    '# Options'
"""

from __future__ import annotations

from tableapi.config import TABLE_OPTIONS
from tableapi.connectors import CONNECTOR_OPTIONS
from tableapi.connectors.lookup_hint import OPTIONS as LOOKUP_HINT_OPTIONS
from tableapi.options import ConfigOption, OptionGroup

#: The scopes, in the reference's order.
GROUPS: tuple[OptionGroup, ...] = (
    TABLE_OPTIONS,
    *(CONNECTOR_OPTIONS[name] for name in sorted(CONNECTOR_OPTIONS)),
    LOOKUP_HINT_OPTIONS,
)


def reference(groups: tuple[OptionGroup, ...] = GROUPS) -> str:
    """The reference in Markdown: a table per group (key, default, type, description)."""
    lines = [
        "# Options",
        "",
        "Every option the product reads, by scope. Generated from the options' declarations "
        "(`ConfigOptions.key(..)` in `tableapi/config.py`, `tableapi/connectors/`) by "
        "`python -m tableapi.options > docs/options.md`; do not edit it by hand. A value an "
        "option cannot take is refused naming the option, the value and what it takes.",
    ]
    for group in groups:
        lines += ["", f"## {group.title}", "", group.summary, ""]
        lines += ["| Key | Default | Type | Description |", "| --- | --- | --- | --- |"]
        lines += [_row(option) for option in group]
    return "\n".join(lines) + "\n"


def _row(option: ConfigOption[object]) -> str:
    """One option's row.

    >>> from tableapi.options import ConfigOptions
    >>> _row(ConfigOptions.key("k").enum_type(("a", "b")).default_value("a")
    ...      .with_description("A | B.").with_deprecated_keys("old"))
    '| `k` | `a` | Enum | A \\\\| B. Values: `a`, `b`. Deprecated key: `old`. |'
    """
    shown = option.shown_default()
    default = f"`{shown}`" if shown else "(none)"
    notes = [option.description]
    if isinstance(option.requirement, str):
        notes.append(f"Must be {option.requirement}.")
    if option.type.values:
        notes.append("Values: " + ", ".join(f"`{v}`" for v in option.type.values) + ".")
    for label, keys in (("Fallback", option.fallback_keys), ("Deprecated", option.deprecated_keys)):
        if keys:
            plural = "s" if len(keys) > 1 else ""
            notes.append(f"{label} key{plural}: " + ", ".join(f"`{k}`" for k in keys) + ".")
    text = " ".join(n for n in notes if n).replace("|", "\\|")
    return f"| `{option.key}` | {default} | {option.type.name} | {text} |"


if __name__ == "__main__":
    print(reference(), end="")
