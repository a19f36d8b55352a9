"""Office Open XML documents: DOCX (python-docx), PPTX (python-pptx), XLSX (openpyxl).

Each becomes readable Markdown: DOCX headings -> `#`, lists -> `-` items, tables -> Markdown
tables; one `## Slide N: <title>` section per slide (slides count as pages); one
`## <sheet>` section per worksheet with its rows as a Markdown table (capped).
Every container is checked against zip-bomb limits before a parser opens it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
from docx.oxml.ns import qn
from pptx.shapes.group import GroupShape

from app.knowledge.pipeline.readers.archive import DEFAULT_ZIP_LIMITS, ZipLimits, check_zip
from app.knowledge.pipeline.readers.document import Document, clean_title
from app.knowledge.pipeline.readers.tables import markdown_table

# Row and column caps per worksheet: a Markdown table beyond this is not useful to anyone.
MAX_SHEET_ROWS = 10_000
MAX_SHEET_COLUMNS = 100

# openpyxl warns about harmless things (unknown extensions, missing default styles, data
# validation it does not read); in a reader they are noise.
warnings.filterwarnings("ignore", category=UserWarning, module=r"openpyxl(\..*)?$")

# --- DOCX ---------------------------------------------------------------------------------

_W_P = qn("w:p")
_W_TBL = qn("w:tbl")
_W_TR = qn("w:tr")
_W_TC = qn("w:tc")
_W_SDT = qn("w:sdt")
_W_SDT_CONTENT = qn("w:sdtContent")
_W_CUSTOM_XML = qn("w:customXml")
_W_T = qn("w:t")
_W_TAB = qn("w:tab")
_W_BR = qn("w:br")
_W_CR = qn("w:cr")
_W_PPR = qn("w:pPr")
_W_PSTYLE = qn("w:pStyle")
_W_NUMPR = qn("w:numPr")
_W_ILVL = qn("w:ilvl")
_W_VAL = qn("w:val")
_W_TCPR = qn("w:tcPr")
_W_GRIDSPAN = qn("w:gridSpan")
_W_VMERGE = qn("w:vMerge")
_W_TRPR = qn("w:trPr")
_TEXT_TAGS = (_W_T, _W_TAB, _W_BR, _W_CR)

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$")
_LIST_STYLE = re.compile(r"^list (?:bullet|number|continue)(?:\s*([2-9]))?$")


def read_docx(path: Path, limits: ZipLimits = DEFAULT_ZIP_LIMITS) -> Document:
    check_zip(path, "Word document", limits)
    document = docx.Document(str(path))
    styles = _docx_styles(document)
    blocks: list[str] = []
    first_heading: str | None = None
    for element in _docx_blocks(document.element.body):
        if element.tag == _W_TBL:
            table = _docx_table(element)
            if table:
                blocks.append(table)
            continue
        text = _docx_text(element).strip()
        if not text:
            continue
        style_id = _docx_style_id(element)
        kind, level = styles.get(style_id, ("", 0)) if style_id else ("", 0)
        numbered = _docx_list_level(element)
        if kind == "heading":
            heading = " ".join(text.split())
            first_heading = first_heading or heading
            blocks.append(f"{'#' * level} {heading}")
        elif numbered is not None or kind == "list":
            depth = numbered if numbered is not None else level
            lines = text.split("\n")
            indent = "  " * min(depth, 8)
            blocks.append(
                f"{indent}- {lines[0]}" + "".join(f"\n{indent}  {line}" for line in lines[1:])
            )
        else:
            blocks.append(text)
    title = clean_title(document.core_properties.title) or clean_title(first_heading)
    return Document(text=_join_docx_blocks(blocks), title=title or path.stem)


def _docx_styles(document: Any) -> dict[str, tuple[str, int]]:
    """style id -> ("heading", level) | ("list", level), following `based on` chains."""
    kinds: dict[str, tuple[str, int]] = {}
    for style in document.styles:
        try:
            style_id = style.style_id
        except Exception:
            continue
        current, seen = style, 0
        while current is not None and seen < 8:
            name = (current.name or "").strip().lower()
            if name == "title":
                kinds[style_id] = ("heading", 1)
                break
            heading = _HEADING_STYLE.match(name)
            if heading:
                kinds[style_id] = ("heading", int(heading.group(1)))
                break
            listed = _LIST_STYLE.match(name)
            if listed:
                kinds[style_id] = ("list", int(listed.group(1) or 1) - 1)
                break
            current = getattr(current, "base_style", None)
            seen += 1
    return kinds


def _docx_blocks(container: Any) -> Iterator[Any]:
    """Body paragraphs and tables in order, looking inside content controls."""
    for child in container.iterchildren():
        if child.tag in (_W_P, _W_TBL):
            yield child
        elif child.tag == _W_SDT:
            content = child.find(_W_SDT_CONTENT)
            if content is not None:
                yield from _docx_blocks(content)
        elif child.tag == _W_CUSTOM_XML:
            yield from _docx_blocks(child)


def _docx_text(element: Any) -> str:
    """The visible text of a paragraph (insertions included, deletions and field codes not)."""
    parts: list[str] = []
    for node in element.iter(_TEXT_TAGS):
        tag = node.tag
        if tag == _W_T:
            parts.append(node.text or "")
        elif tag == _W_TAB:
            parts.append("\t")
        else:
            parts.append("\n")
    return "".join(parts)


def _docx_style_id(paragraph: Any) -> str | None:
    ppr = paragraph.find(_W_PPR)
    if ppr is None:
        return None
    style = ppr.find(_W_PSTYLE)
    return style.get(_W_VAL) if style is not None else None


def _docx_list_level(paragraph: Any) -> int | None:
    ppr = paragraph.find(_W_PPR)
    numpr = ppr.find(_W_NUMPR) if ppr is not None else None
    if numpr is None:
        return None
    ilvl = numpr.find(_W_ILVL)
    value = ilvl.get(_W_VAL) if ilvl is not None else None
    return int(value) if value is not None and value.isdigit() else 0


def _docx_table(table: Any) -> str:
    rows: list[list[str]] = []
    for row in table.iterchildren(_W_TR):
        cells: list[str] = []
        for cell in row.iterchildren(_W_TC):
            props = cell.find(_W_TCPR)
            span, continued = 1, False
            if props is not None:
                grid = props.find(_W_GRIDSPAN)
                value = grid.get(_W_VAL) if grid is not None else None
                if value is not None and value.isdigit():
                    span = max(1, min(int(value), 64))
                merge = props.find(_W_VMERGE)
                # <w:vMerge/> continues the cell above; <w:vMerge w:val="restart"/> starts one.
                continued = merge is not None and merge.get(_W_VAL) in (None, "continue")
            text = "" if continued else _docx_cell_text(cell)
            cells.append(text)
            cells.extend([""] * (span - 1))
        if any(cell.strip() for cell in cells):
            rows.append(cells)
    return markdown_table(rows)


def _docx_cell_text(cell: Any) -> str:
    lines = (_docx_text(p).strip() for p in cell.iter(_W_P))
    return "\n".join(line for line in lines if line)


def _join_docx_blocks(blocks: list[str]) -> str:
    """Blank lines between blocks, but consecutive list items stay one tight list."""
    out: list[str] = []
    previous_item = False
    for block in blocks:
        item = block.lstrip().startswith("- ")
        if out:
            out.append("\n" if item and previous_item else "\n\n")
        out.append(block)
        previous_item = item
    return "".join(out)


# --- PPTX ---------------------------------------------------------------------------------


def read_pptx(path: Path, limits: ZipLimits = DEFAULT_ZIP_LIMITS) -> Document:
    check_zip(path, "PowerPoint presentation", limits)
    presentation = pptx.Presentation(str(path))
    sections: list[str] = []
    first_title: str | None = None
    for number, slide in enumerate(presentation.slides, start=1):
        title_shape = slide.shapes.title
        title = ""
        if title_shape is not None and title_shape.has_text_frame:
            title = " ".join(title_shape.text_frame.text.split())
        first_title = first_title or clean_title(title)
        lines: list[str] = []
        for shape in slide.shapes:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            lines.extend(_pptx_shape_text(shape, 0))
        heading = f"## Slide {number}: {title}" if title else f"## Slide {number}"
        parts = [heading]
        body = "\n".join(lines).strip()
        if body:
            parts.append(body)
        if slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            notes = _pptx_frame_text(frame) if frame is not None else ""
            if notes:
                parts.append("### Notes\n\n" + notes)
        sections.append("\n\n".join(parts))
    starts: list[int] = []
    offset = 0
    for section in sections:
        starts.append(offset)
        offset += len(section) + 2
    doc_title = clean_title(presentation.core_properties.title) or first_title or path.stem
    return Document(text="\n\n".join(sections), title=doc_title, page_starts=tuple(starts))


def _pptx_shape_text(shape: Any, depth: int) -> list[str]:
    if isinstance(shape, GroupShape):
        if depth > 16:
            return []
        return [line for child in shape.shapes for line in _pptx_shape_text(child, depth + 1)]
    if getattr(shape, "has_table", False):
        rows = [
            ["" if cell.is_spanned else cell.text for cell in row.cells] for row in shape.table.rows
        ]
        table = markdown_table([row for row in rows if any(c.strip() for c in row)])
        return ["", table, ""] if table else []
    if getattr(shape, "has_text_frame", False):
        text = _pptx_frame_text(shape.text_frame)
        return [text] if text else []
    return []


def _pptx_frame_text(frame: Any) -> str:
    lines = []
    for paragraph in frame.paragraphs:
        line = paragraph.text.replace("\v", "\n").strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


# --- XLSX ---------------------------------------------------------------------------------


def read_xlsx(path: Path, limits: ZipLimits = DEFAULT_ZIP_LIMITS) -> Document:
    check_zip(path, "Excel workbook", limits)
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    try:
        sections = []
        for sheet in workbook.worksheets:
            body = _sheet_markdown(sheet)
            if body:
                sections.append(f"## {' '.join(str(sheet.title).split())}\n\n{body}")
        title = clean_title(workbook.properties.title)
    finally:
        workbook.close()
    return Document(text="\n\n".join(sections), title=title or path.stem)


def _sheet_markdown(sheet: Any) -> str:
    if hasattr(sheet, "reset_dimensions"):
        # Read-only sheets trust the stored dimension, which is often wrong (and sometimes
        # claims a million rows): let the rows themselves say how big the sheet is.
        sheet.reset_dimensions()
    rows: list[list[str]] = []
    more_rows = False
    wide = False
    for values in sheet.iter_rows(max_col=MAX_SHEET_COLUMNS + 1, values_only=True):
        if values.count(None) == len(values):  # fast path: gaps can be a million rows long
            continue
        cells = _trim([_cell_text(value) for value in values])
        if not cells:
            continue
        if len(rows) >= MAX_SHEET_ROWS:
            more_rows = True
            break
        if len(cells) > MAX_SHEET_COLUMNS:
            wide = True
            cells = _trim(cells[:MAX_SHEET_COLUMNS])
        rows.append(cells)
    if not rows:
        return ""
    parts = [markdown_table(rows)]
    if more_rows:
        parts.append(f"_Only the first {MAX_SHEET_ROWS:,} rows of this sheet are included._")
    if wide:
        parts.append(f"_Only the first {MAX_SHEET_COLUMNS} columns of this sheet are included._")
    return "\n\n".join(parts)


def _trim(cells: list[str]) -> list[str]:
    end = len(cells)
    while end and not cells[end - 1]:
        end -= 1
    return cells[:end]


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime):
        if value.time() == time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    return str(value).strip()
