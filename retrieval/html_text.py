"""HTML -> plain text with markdown-style headings (scripts, styles and other non-text dropped)."""
from __future__ import annotations

from html.parser import HTMLParser

_DROP = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object"}
_BLOCK = {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "br", "li",
          "ul", "ol", "table", "tr", "blockquote", "pre", "hr", "dl", "dt", "dd", "form", "figure"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.drop_depth = 0
        self.title: str | None = None
        self.lang: str | None = None
        self._in_title = False
        self._title_parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.lang = dict(attrs).get("lang") or None
        if tag == "title":
            self._in_title = True
        if tag in _DROP:
            self.drop_depth += 1
        elif tag in _HEADINGS and not self.drop_depth:
            self.parts.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCK and not self.drop_depth:
            self.parts.append("\n\n" if tag in {"p", "div", "section", "article", "table", "blockquote"} else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _DROP:
            self.drop_depth = max(0, self.drop_depth - 1)
        elif (tag in _HEADINGS or tag in _BLOCK) and not self.drop_depth:
            self.parts.append("\n\n" if tag in _HEADINGS or tag == "p" else "\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title_parts.append(data)
        if self.drop_depth:
            return
        # Collapse inner whitespace but keep a space at either edge: "is <b>150</b> EUR" stays spaced.
        lead = " " if data[:1].isspace() else ""
        trail = " " if data[-1:].isspace() else ""
        self.parts.append(lead + " ".join(data.split()) + trail if not data.isspace() else " ")


def html_to_text(html: str) -> tuple[str, str | None, str | None]:
    """Return (text, <title>, <html lang>); headings become '# ...' lines so chunking sees them."""
    p = _Extractor()
    p.feed(html)
    p.close()
    raw = "".join(p.parts)
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines to one paragraph break
        if line or (out and out[-1]):
            out.append(line)
    title = " ".join("".join(p._title_parts).split()) or None
    return "\n".join(out).strip() + "\n", title, p.lang
