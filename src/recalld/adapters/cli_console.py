"""The rich console of ``recalld``'s human output: stored text is shown, never obeyed.

Every string it renders (a line printed, a table cell given as a string) goes through
:func:`~recalld.adapters._cli_support.visible` first, so an escape sequence inside a
memory, an intention or an entity name reaches the terminal as ``\\x1b[2J``, not as a
cleared screen. Cells built as :class:`rich.text.Text` are passed through ``visible`` by
whoever builds them (``cli_output``, ``cli_graph``).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from recalld.adapters._cli_support import visible

__all__ = ["ShownConsole"]


class ShownConsole(Console):
    """A :class:`rich.console.Console` whose strings show control characters as escapes."""

    def render_str(self, text: str, **options: Any) -> Text:
        """Render ``text`` as rich does, once what a terminal would obey in it is escaped."""
        return super().render_str(visible(text), **options)
