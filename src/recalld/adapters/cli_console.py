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


# The narrowest a table is laid out: at COLUMNS=1 or 3 a table had no room for a single
# character and printed blank lines, the memories gone without a word.
MIN_WIDTH = 20
# COLUMNS=0 says "width unknown" (as stty reports a terminal that gave none): the default.
DEFAULT_WIDTH = 80


class ShownConsole(Console):
    """A :class:`rich.console.Console` whose strings show control characters as escapes,
    never laid out narrower than :data:`MIN_WIDTH` columns."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        width = self.width
        if width < MIN_WIDTH:
            self.width = DEFAULT_WIDTH if width <= 0 else MIN_WIDTH

    def render_str(self, text: str, **options: Any) -> Text:
        """Render ``text`` as rich does, once what a terminal would obey in it is escaped."""
        return super().render_str(visible(text), **options)
