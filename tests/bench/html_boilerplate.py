"""Boilerplate removal: Trove's HTML renderer against trafilatura, on hand-made pages.

    python tests/bench/html_boilerplate.py [--repeat R]

trafilatura is not a Trove dependency; install it (with lxml_html_clean) where this runs,
or only Trove's renderer is measured. Four pages hold known article sentences and known
furniture phrases (navigation, site header, sidebar, footer, cookie banner, comments):

- semantic: <header>, <nav>, <article>, <aside>, <footer>;
- div-soup: the same content in <div class="menu|sidebar|footer|content"> only;
- roles: <div role="navigation|complementary|contentinfo|dialog">;
- table-and-list: an article whose facts sit in a table and a list.

Quality: the share of article sentences kept (recall) and of furniture phrases left in
(leak). Speed: pages per second on the small pages and on a 0.8 MB page (the semantic
page's article repeated). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.knowledge.pipeline.readers.html import html_to_markdown

ARTICLE = [
    f"Sentence {n} of the article explains how tomato plant number {n} grows in full sun."
    for n in range(12)
]
FURNITURE = {
    "nav": "Home Products Pricing Blog Contact",
    "header": "Acme Gardening Supplies since 1921",
    "sidebar": "Related posts you might enjoy reading next",
    "footer": "Copyright Acme Corporation all rights reserved privacy policy",
    "cookies": "We use cookies to improve your experience accept all",
    "comments": "Leave a comment below and share your own tomato story",
}


def _paragraphs(sentences: list[str]) -> str:
    return "".join(f"<p>{s}</p>" for s in sentences)


def semantic(article: list[str] = ARTICLE) -> str:
    f = FURNITURE
    return (
        f"<html><head><title>Tomatoes</title></head><body>"
        f"<header><p>{f['header']}</p><nav><a href='/'>{f['nav']}</a></nav></header>"
        f"<main><article><h1>Growing tomatoes</h1>{_paragraphs(article)}</article>"
        f"<section class='comments'><h2>Comments</h2><p>{f['comments']}</p></section></main>"
        f"<aside><h3>{f['sidebar']}</h3></aside>"
        f"<footer><p>{f['footer']}</p></footer>"
        f"<div role='dialog'>{f['cookies']}</div></body></html>"
    )


def div_soup() -> str:
    f = FURNITURE
    return (
        f"<html><head><title>Tomatoes</title></head><body>"
        f"<div id='top' class='header'>{f['header']}</div>"
        f"<div class='menu'><ul><li><a href='/'>{f['nav']}</a></li></ul></div>"
        f"<div class='content'><h1>Growing tomatoes</h1>{_paragraphs(ARTICLE)}</div>"
        f"<div class='comments'><p>{f['comments']}</p></div>"
        f"<div class='sidebar'><p>{f['sidebar']}</p></div>"
        f"<div class='footer'><p>{f['footer']}</p></div>"
        f"<div class='cookie-banner'>{f['cookies']}</div></body></html>"
    )


def roles() -> str:
    f = FURNITURE
    return (
        f"<html><head><title>Tomatoes</title></head><body>"
        f"<div role='banner'>{f['header']}</div>"
        f"<div role='navigation'><a href='/'>{f['nav']}</a></div>"
        f"<div><h1>Growing tomatoes</h1>{_paragraphs(ARTICLE)}</div>"
        f"<div role='complementary'>{f['sidebar']}</div>"
        f"<div role='contentinfo'>{f['footer']}</div>"
        f"<div role='dialog'>{f['cookies']}</div></body></html>"
    )


def table_and_list() -> str:
    f = FURNITURE
    rows = "".join(f"<tr><td>plant {n}</td><td>{s}</td></tr>" for n, s in enumerate(ARTICLE[:6]))
    items = "".join(f"<li>{s}</li>" for s in ARTICLE[6:])
    return (
        f"<html><head><title>Tomatoes</title></head><body>"
        f"<nav>{f['nav']}</nav><header>{f['header']}</header>"
        f"<article><h1>Growing tomatoes</h1><table>{rows}</table><ul>{items}</ul></article>"
        f"<aside>{f['sidebar']}</aside><footer>{f['footer']}</footer></body></html>"
    )


PAGES: dict[str, Callable[[], str]] = {
    "semantic": semantic,
    "div-soup": div_soup,
    "roles": roles,
    "table-and-list": table_and_list,
}


def _squash(text: str) -> str:
    return " ".join(text.replace("|", " ").replace("*", " ").split())


def quality(extract: Callable[[str], str]) -> dict[str, dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for name, page in PAGES.items():
        text = _squash(extract(page()))
        kept = sum(s in text for s in ARTICLE) / len(ARTICLE)
        leaked = [k for k, phrase in FURNITURE.items() if phrase in text]
        found[name] = {"recall": round(kept, 2), "leaked": leaked}
    return found


def speed(extract: Callable[[str], str], repeat: int) -> dict[str, float]:
    small = [page() for page in PAGES.values()] * repeat
    started = time.perf_counter()
    for html in small:
        extract(html)
    small_rate = len(small) / (time.perf_counter() - started)
    big_article = ARTICLE * (800_000 // len(_paragraphs(ARTICLE)) + 1)
    big = semantic(big_article)
    started = time.perf_counter()
    extract(big)
    big_s = time.perf_counter() - started
    return {
        "small_pages_per_s": round(small_rate, 1),
        "big_page_mb": round(len(big.encode()) / 1e6, 2),
        "big_page_s": round(big_s, 3),
    }


def trove(html: str) -> str:
    return html_to_markdown(html)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    extractors: dict[str, Callable[[str], str]] = {"trove": trove}
    try:
        # Imported by name: an optional package of this bench only, not of Trove.
        trafilatura = importlib.import_module("trafilatura")

        def with_trafilatura(html: str) -> str:
            text = trafilatura.extract(html, output_format="markdown", include_tables=True)
            return str(text or "")

        extractors["trafilatura"] = with_trafilatura
    except ImportError:
        pass
    report = {
        name: {"quality": quality(fn), "speed": speed(fn, args.repeat)}
        for name, fn in extractors.items()
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
