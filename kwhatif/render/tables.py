"""The one table style of kwhatif: kubectl-like aligned columns under an upper-case header, sized to
the terminal, coloured through rich's styles on a terminal.

Sized to the terminal without breaking a token (a name, a quantity, a flag): when the natural widths
do not fit, long headers wrap at spaces first, then the columns marked ``wrap`` (reasons, name lists)
shrink and their text wraps at spaces inside the cell, optional columns are left out, and then a
wrapping column moves onto its own line below its row; only a terminal narrower than one name folds
words. No row ever runs into the next line. On a pipe (no width) every row is one line at its
natural width, as kubectl prints it.

Why not ``rich.table.Table``: it costs about a millisecond a row, and a 5,000-node placement or a
preemption explain with thousands of victims would spend seconds drawing; this writes each line
once, whatever the number of rows, and looks the same for 5 rows and 5,000.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass
from functools import lru_cache

from rich.cells import cell_len
from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style
from rich.text import Text

from kwhatif.render import env
from kwhatif.versions import describe

GAP = "   "  # between columns, as kubectl prints them
COMFORTABLE_WIDTH = 30  # wrapping columns shrink to this before optional columns are left out
NARROW_GAP = "  "  # when the table does not fit with GAP
_WRAP_CONSOLE = Console(width=1_000_000)  # Text.wrap reads only its tab size and ambiguous-width setting

@dataclass(frozen=True)
class Column:
    header: str
    right: bool = False  # numbers
    wrap: bool = False  # long text (reasons, lists of names) may wrap inside the cell
    optional: bool = False  # left out (last first) rather than folding the others when the table cannot fit
    min_width: int = 12  # a wrapping column is not squeezed below this unless nothing else is left


def _len(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def shared_suffix(names: list[str], shortest: int = 10) -> str:
    """The domain suffix every name shares (``.eu-west-1.compute.internal``), to show once instead of
    on every row; "" when there is none worth it."""
    if len(names) < 2:
        return ""
    suffix = os.path.commonprefix([name[::-1] for name in names])[::-1]
    suffix = suffix[suffix.find("."):] if "." in suffix else ""
    if len(suffix) < shortest or any(len(name) == len(suffix) for name in names):
        return ""
    return suffix


def say_suffix(console: Console, suffix: str, style: str = "dim") -> None:
    """The line that says the shared suffix left out of the node names below it."""
    console.print(Text(f"Node names end in {suffix} (left out below).", style=style))


def console_width(console: Console) -> int | None:
    """The width tables must fit, or None on a pipe (soft wrap: lines are never broken)."""
    return None if console.soft_wrap else console.width


@dataclass(frozen=True)
class Layout:
    """How a table fits a width: each column's width (0: an optional column left out), the gap between
    columns, the wrapping columns moved below their row (``detail``), and whether tokens had to fold."""

    widths: list[int]
    gap: str
    detail: tuple[int, ...] = ()
    fold: bool = False


def fit_widths(columns: list[Column], natural: list[int], cell_max: list[int], width: int | None,
               word_max: list[int] | None = None) -> Layout:
    """Column widths so that a row fits ``width`` without breaking a token: ``natural`` includes the
    headers, ``word_max`` is each column's longest word. A name, a quantity or a flag never splits:
    a column that does not wrap keeps its longest cell, a wrapping one its longest word, headers wrap
    at spaces. In turn: headers wrap, wrapping columns shrink to a comfortable width, optional columns
    are left out (last first), wrapping columns shrink to their longest word, then move below their row
    (``detail``); only a terminal narrower than a single name folds tokens."""
    if width is None:
        return Layout(list(natural), GAP)
    word_max = word_max if word_max is not None else cell_max
    floors = [max(_longest_word(col.header), word_max[i] if col.wrap else cell_max[i], 1)
              for i, col in enumerate(columns)]
    optional = [i for i in reversed(range(len(columns))) if columns[i].optional]
    for dropped in range(len(optional) + 1):
        widths = list(natural)
        for i in optional[:dropped]:
            widths[i] = 0
        gap = GAP if _excess(widths, GAP, width) <= 0 else NARROW_GAP

        def excess() -> int:
            return _excess(widths, gap, width)

        # A column wider than its cells only for its header gives that back first (the header wraps).
        for i in range(len(columns)):
            if widths[i]:
                widths[i] -= max(0, min(widths[i] - max(cell_max[i], floors[i]), excess()))
        _shrink(widths, excess, lambda i: max(COMFORTABLE_WIDTH, columns[i].min_width, floors[i])
                if columns[i].wrap else widths[i])
        if excess() <= 0:
            return Layout(widths, gap)
        # leave out one more optional column, if any is left, before squeezing the text further
    _shrink(widths, excess, lambda i: max(columns[i].min_width, floors[i]) if columns[i].wrap else widths[i])
    _shrink(widths, excess, lambda i: floors[i] if columns[i].wrap else widths[i])
    if excess() <= 0:
        return Layout(widths, gap)
    detail = []
    for i in sorted((i for i in range(len(columns)) if columns[i].wrap and widths[i]),
                    key=lambda i: (-natural[i], -i)):
        detail.append(i)
        widths[i] = 0
        if excess() <= 0:
            return Layout(widths, gap, tuple(sorted(detail)))
    _shrink(widths, excess, lambda i: min(widths[i], 1))  # narrower than a name: tokens fold
    return Layout(widths, gap, tuple(sorted(detail)), fold=True)


def _excess(widths: list[int], gap: str, width: int) -> int:
    kept = [w for w in widths if w]
    return sum(kept) + len(gap) * (len(kept) - 1) - width


def _shrink(widths: list[int], excess, floor_of) -> None:
    over = excess()
    while over > 0:
        candidates = [i for i in range(len(widths)) if widths[i] > floor_of(i)]
        if not candidates:
            return
        i = max(candidates, key=lambda j: widths[j])
        widths[i] -= 1
        over -= 1


def _longest_word(text: str) -> int:
    return max((_len(w) for w in text.split()), default=0)


def _wrap(text: str, width: int, fold: bool = False) -> list[str]:
    """``text`` in lines of ``width`` cells, broken at spaces only (a word folds only when ``fold``)."""
    if _len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_long_words=fold, break_on_hyphens=False) or [""]


@lru_cache(maxsize=64)
def _ansi(style: str) -> tuple[str, str]:
    rendered = Style.parse(style).render("\0", color_system=ColorSystem.STANDARD)
    before, _, after = rendered.partition("\0")
    return before, after


def table_lines(columns: list[Column], rows: list[list], width: int | None, colour: bool) -> tuple[list[str], int]:
    """The table as lines (ANSI-styled when ``colour``); every line at most ``width`` cells. A cell is
    its text, or (text, rich style) such as ("rejected", "red"). Also how many optional columns were
    left out to fit.

    Built column by column (pad every cell of a column at once), so thousands of rows cost
    milliseconds; only rows with a cell wider than its column take the wrapping path."""
    texts = [[c if c.__class__ is str else c[0] for c in row] for row in rows]
    by_column = list(zip(*texts)) if texts else [()] * len(columns)
    lengths = [[len(t) if t.isascii() else cell_len(t) for t in column] for column in by_column]
    cell_max = [max(column, default=0) for column in lengths]
    natural = [max(cell_max[i], _len(col.header)) for i, col in enumerate(columns)]
    word_max = [max(map(_longest_word, by_column[i]), default=0) if col.wrap and width is not None
                else cell_max[i] for i, col in enumerate(columns)]
    layout = fit_widths(columns, natural, cell_max, width, word_max)
    widths, gap = layout.widths, layout.gap
    header_style = "bold" if colour else None
    headers = [_wrap(col.header, w, layout.fold) if w else [] for col, w in zip(columns, widths)]
    lines = [_line(headers, k, [header_style] * len(columns), columns, widths, colour, gap)
             for k in range(max(map(len, headers)))]
    overflowing = {r for i, w in enumerate(widths) if w for r, n in enumerate(lengths[i]) if n > w}
    overflowing |= {r for i in layout.detail for r, n in enumerate(lengths[i]) if n}
    padded = []
    for i, col in enumerate(columns):
        w = widths[i]
        if not w:
            continue
        cells = by_column[i]
        if colour:
            cells = [_styled(t, row[i]) for t, row in zip(cells, rows)]
        if col.right:
            padded.append([" " * (w - n) + t for t, n in zip(cells, lengths[i])])
        else:
            padded.append([t + " " * (w - n) for t, n in zip(cells, lengths[i])])
    body = [gap.join(parts).rstrip() for parts in zip(*padded)] if padded else [""] * len(rows)
    dropped = sum(1 for i, w in enumerate(widths) if not w and i not in layout.detail)
    if not overflowing:
        return lines + body, dropped
    indent = _detail_indent(widths, gap, width, max((word_max[i] for i in layout.detail), default=0))
    for r, line in enumerate(body):
        if r not in overflowing:
            lines.append(line)
            continue
        styles = [None if c.__class__ is str else c[1] for c in rows[r]]
        lines += _row_lines(texts[r], styles, columns, widths, colour, gap, layout.fold)
        for i in layout.detail:
            lines += [" " * indent + _styled(part, rows[r][i] if colour else "")
                      for part in _wrap(texts[r][i], width - indent, layout.fold) if texts[r][i]]
    return lines, dropped


def _detail_indent(widths: list[int], gap: str, width: int | None, longest_word: int) -> int:
    """Where a cell moved below its row starts: under the second column, unless that leaves it too
    narrow for its text or its longest word; then indented by two, or not at all when even that cuts the word."""
    first = next((w for w in widths if w), 0) + len(gap)
    if width is None or width - first >= max(COMFORTABLE_WIDTH, longest_word):
        return first
    return 2 if width - 2 >= longest_word else 0


def _styled(text: str, cell) -> str:
    if cell.__class__ is str or not cell[1] or not text:
        return text
    before, after = _ansi(cell[1])
    return f"{before}{text}{after}"


def _row_lines(texts: list[str], styles: list, columns: list[Column], widths: list[int], colour: bool,
               gap: str, fold: bool) -> list[str]:
    if all(_len(t) <= w or not w for t, w in zip(texts, widths)):
        return [_line([[t] for t in texts], 0, styles, columns, widths, colour, gap)]
    wrapped = [_wrap(t, w, fold) if w else [] for t, w in zip(texts, widths)]
    return [_line(wrapped, k, styles, columns, widths, colour, gap) for k in range(max(map(len, wrapped)))]


def _line(wrapped: list[list[str]], k: int, styles: list, columns: list[Column], widths: list[int],
          colour: bool, gap: str) -> str:
    parts = []
    for cells, style, col, w in zip(wrapped, styles, columns, widths):
        if not w:
            continue
        text = cells[k] if k < len(cells) else ""
        pad = " " * (w - _len(text))
        if colour and style and text:
            before, after = _ansi(style)
            text = f"{before}{text}{after}"
        parts.append(pad + text if col.right else text + pad)
    return gap.join(parts).rstrip()


def print_table(console: Console, columns: list[Column], rows: list[list], title: str | None = None) -> int:
    """The table on the console's file, sized to its width and coloured when it has colour; returns
    how many optional columns did not fit."""
    colour = console.color_system is not None
    if title:
        console.print(title, style="bold", markup=False, highlight=False)
    lines, dropped = table_lines(columns, rows, console_width(console), colour)
    console.file.write("\n".join(lines) + "\n")
    return dropped


def wrap_cell(text: Text, width: int | None) -> list[Text]:
    """``text`` as the lines of a column ``width`` cells wide (one line when there is no width)."""
    if width is None:
        return [text]
    return list(text.wrap(_WRAP_CONSOLE, max(width, 1), overflow="fold"))


def print_columns(console: Console, cells: list[Text], widths: list[int | None]) -> None:
    """One row of text columns side by side, each wrapping inside its own column (the last one takes
    what is left of the line); on a pipe, one line."""
    width = console_width(console)
    if width is not None:
        fixed = sum(w for w in widths[:-1])
        widths = [*widths[:-1], max(width - fixed, COMFORTABLE_WIDTH // 2)]
    else:
        widths = [*widths[:-1], None]
    wrapped = [wrap_cell(cell, w) for cell, w in zip(cells, widths)]
    for row in range(max(len(lines) for lines in wrapped)):
        line = Text()
        for i, lines in enumerate(wrapped):
            part = lines[row] if row < len(lines) else Text()
            line.append_text(part)
            if i < len(wrapped) - 1:
                line.append(" " * ((widths[i] or cell_len(part.plain)) - cell_len(part.plain)))
        line.rstrip()
        console.print(line, soft_wrap=True)


def print_hanging(console: Console, lead: Text | str, text: Text | str) -> None:
    """``lead`` and then ``text``, whose next lines start under its first character rather than at
    the terminal's left edge (a note, a warning under a table)."""
    lead = Text(lead) if isinstance(lead, str) else lead
    text = Text(text) if isinstance(text, str) else text
    width, indent = console_width(console), cell_len(lead.plain)
    longest = _longest_word(text.plain)
    if width is not None and indent and width - indent < longest:  # a word (a path, a URL) would break
        alone = lead.copy()
        alone.rstrip()
        console.print(alone)
        indent = max(min(len(lead.plain) - len(lead.plain.lstrip()) + 2, width - longest), 0)
        lead = Text(" " * indent)
    print_columns(console, [lead, text], [indent, None])


def print_version(console: Console, data: dict) -> None:
    """The header line every table starts with: the kube-scheduler release that answered (``data`` holds
    Features.to_dict()), and how it was chosen when that is a guess or a stand-in."""
    console.print(Text.assemble("Answered as ", (describe(data), "bold")))


BAR_WIDTH = 10
_EIGHTHS = " ▏▎▍▌▋▊▉"
_SPARKS = "▁▂▃▄▅▆▇█"


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """``fraction`` (0 to 1) as a bar ``width`` cells wide, in eighths of a cell, on a light track."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    drawn = "█" * full + (_EIGHTHS[part] if part else "")
    return drawn + "░" * (width - len(drawn))


def with_bars(console: Console, fractions: list[float], texts: list[str]) -> list[str]:
    """A column's cells: each text (aligned on the right) and a bar of its fraction on a terminal; the
    texts alone on a pipe (a script reads the numbers; -o json never has a picture)."""
    if console_width(console) is None:
        return texts
    width = max(map(_len, texts), default=0)
    return [f"{' ' * (width - _len(text))}{text} {bar(fraction)}" for fraction, text in zip(fractions, texts)]


def histogram(values: list[int], bins: int = 5, width: int = 2 * BAR_WIDTH) -> list[str]:
    """How ``values`` spread between their lowest and highest: ``bins`` equal ranges, each a line with its
    range, a bar of its count (the largest count fills ``width``) and the count; none for a single value."""
    low, high = min(values), max(values)
    if low == high:
        return []
    bins = min(bins, high - low + 1)
    counts = [0] * bins
    for value in values:
        counts[(value - low) * bins // (high - low + 1)] += 1
    edges = [low + (high - low + 1) * i // bins for i in range(bins + 1)]
    ranges = [f"{edges[i]}-{edges[i + 1] - 1}" if edges[i + 1] - 1 > edges[i] else str(edges[i]) for i in range(bins)]
    label = max(map(len, ranges))
    top = max(counts)
    return [f"{ranges[i]:>{label}} {bar(counts[i] / top, width)} {counts[i]:,}" for i in range(bins)]


def print_skipped_kinds(skipped: dict[str, int]) -> None:
    """The objects of kinds scheduling does not read, on stderr: a note about the input, not the answer."""
    if skipped:
        kinds = ", ".join(f"{kind} ({count})" for kind, count in sorted(skipped.items()))
        env.current().error_console().print(Text(f"Skipped objects of kinds scheduling does not read: {kinds}.",
                                                 style="dim"))


def print_warnings(console: Console, warnings) -> None:
    """Each warning on its own ``warning:`` line, as every command ends its human output."""
    for warning in warnings:
        print_hanging(console, Text("warning: ", "yellow"), warning)
