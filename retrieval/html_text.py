"""HTML -> plain text in markdown shape: '#' headings, '| a | b |' table rows, '- ' list items."""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

_DROP = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object"}
_BLOCK = {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "br",
          "blockquote", "pre", "hr", "dl", "dt", "dd", "form", "figure", "figcaption"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


@dataclass
class _Table:
    rows: list[list[str]] = field(default_factory=list)
    header_rows: int = 0              # leading rows that are the header (<thead>, or all-<th> first row)
    row_is_header: list[bool] = field(default_factory=list)
    cell: list[str] | None = None     # text parts of the open cell (or caption)
    in_thead: bool = False
    nested: int = 0                   # depth of tables inside the open cell: flattened into its text
    caption: str = ""

    def render(self) -> str:
        # The caption becomes the table's lead-in line (ending in ':'), which the chunker carries
        # in front of every chunk of the table's rows.
        lead = f"\n\n{self.caption.rstrip(':：')}:" if self.caption else ""
        rows = [r for r in self.rows if any(c for c in r)]
        flags = [h for r, h in zip(self.rows, self.row_is_header) if any(c for c in r)]
        if not rows:
            return lead + "\n\n"
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        # A markdown header needs a separator under it; only the first row can be one (rows above
        # the separator are all the chunker repeats on every chunk of the table).
        if flags[0]:
            lines.insert(1, "|" + "---|" * max(1, len(rows[0])))
        return lead + "\n\n" + "\n".join(lines) + "\n\n"


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.drop_depth = 0
        self.title: str | None = None
        self.lang: str | None = None
        self._in_title = False
        self._title_parts: list[str] = []
        self._tables: list[_Table] = []
        self._lists: list[list[int]] = []   # per open <ul>/<ol>: [next number], 0 for bullets

    def _out(self, s: str) -> None:
        table = self._tables[-1] if self._tables else None
        if table is None:
            self.parts.append(s)
        elif table.cell is not None:  # inside a cell every break is a space: a row stays one line
            table.cell.append(s if s.strip() or s == " " else " ")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.lang = dict(attrs).get("lang") or None
        if tag == "title":
            self._in_title = True
        if tag in _DROP:
            self.drop_depth += 1
        if self.drop_depth:
            return
        table = self._tables[-1] if self._tables else None
        if table is not None and table.cell is not None and (tag == "table" or table.nested):
            table.nested += tag == "table"  # a table inside a cell flattens into the cell's text
            table.cell.append(" ")
        elif tag == "table":
            self._tables.append(_Table())
        elif table is not None and tag == "caption":
            table.cell = []
        elif table is not None and tag in ("thead", "tbody", "tfoot"):
            table.in_thead = tag == "thead"
        elif table is not None and tag == "tr":
            table.rows.append([])
            table.row_is_header.append(table.in_thead or not table.rows[:-1])
        elif table is not None and tag in ("td", "th"):
            if not table.rows:
                table.rows.append([])
                table.row_is_header.append(True)
            table.cell = []
            if tag == "td" and not table.in_thead:
                table.row_is_header[-1] = False
        elif tag in ("ul", "ol"):
            self._lists.append([1 if tag == "ol" else 0])
        elif tag == "li":
            counter = self._lists[-1] if self._lists else [0]
            self._out("\n" + (f"{counter[0]}. " if counter[0] else "- "))
            if counter[0]:
                counter[0] += 1
        elif tag in _HEADINGS:
            self._out("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCK or tag == "caption":
            self._out("\n\n" if tag in {"p", "div", "section", "article", "blockquote", "caption"} else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _DROP:
            self.drop_depth = max(0, self.drop_depth - 1)
            return
        if self.drop_depth:
            return
        table = self._tables[-1] if self._tables else None
        if table is not None and table.nested and table.cell is not None:
            table.nested -= tag == "table"
            table.cell.append(" ")
        elif tag == "table" and table is not None:
            self._tables.pop()
            self._out(table.render())
        elif table is not None and tag == "caption" and table.cell is not None:
            table.caption = " ".join("".join(table.cell).split())
            table.cell = None
        elif table is not None and tag in ("td", "th") and table.cell is not None:
            text = " ".join("".join(table.cell).split()).replace("|", "\\|")
            table.rows[-1].append(text)
            table.cell = None
        elif table is not None and tag == "thead":
            table.in_thead = False
        elif tag in ("ul", "ol") and self._lists:
            self._lists.pop()
            self._out("\n")
        elif tag in _HEADINGS or tag in _BLOCK:
            self._out("\n\n" if tag in _HEADINGS or tag in ("p", "caption") else "\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title_parts.append(data)
        if self.drop_depth:
            return
        # Collapse inner whitespace but keep a space at either edge: "is <b>150</b> EUR" stays spaced.
        lead = " " if data[:1].isspace() else ""
        trail = " " if data[-1:].isspace() else ""
        self._out(lead + " ".join(data.split()) + trail if not data.isspace() else " ")


def html_to_text(html: str) -> tuple[str, str | None, str | None]:
    """Return (text, <title>, <html lang>); headings become '# ...' lines so chunking sees them,
    tables '| cell | cell |' rows (with a '|---|' separator under a header row), list items '- '."""
    p = _Extractor()
    p.feed(html)
    p.close()
    while p._tables:  # an unclosed <table> still comes out
        p.handle_endtag("td")
        p.handle_endtag("table")
    raw = "".join(p.parts)
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines to one paragraph break
        if line or (out and out[-1]):
            out.append(line)
    title = " ".join("".join(p._title_parts).split()) or None
    return "\n".join(out).strip() + "\n", title, p.lang


# the front matter keys an HTML page may give as <meta name="…" content="…"> ("effective-date" reads as
# effective_date)
META_KEYS = frozenset({"title", "authority", "effective_date", "subject", "supersedes", "superseded_by", "language",
                       "tags"})


class _MetaReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "meta":
            return
        a = dict(attrs)
        name = (a.get("name") or "").strip().lower().replace("-", "_")
        if name in META_KEYS and a.get("content") and name not in self.meta:
            self.meta[name] = str(a["content"]).strip()


def html_meta(html: str) -> dict[str, str]:
    """The front matter an HTML page states in its <meta name="authority" content="note"> tags (META_KEYS): what a
    Markdown document says in its front matter, an HTML one says there."""
    reader = _MetaReader()
    reader.feed(html)
    reader.close()
    return reader.meta
