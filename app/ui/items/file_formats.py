"""What the Type column says about a file: its format, from its name ("Markdown", "PDF",
"Python", "XYZ file")."""

from __future__ import annotations

from pathlib import PurePath

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

_CONTEXT = "FileFormats"

# Formats named by words that a translation may change (translated when shown).
_DOCUMENTS: dict[str, tuple[str, ...]] = {
    str(QT_TRANSLATE_NOOP("FileFormats", "Markdown")): (".md", ".markdown", ".mdown", ".mkd"),
    str(QT_TRANSLATE_NOOP("FileFormats", "Text")): (".txt", ".text", ".log"),
    str(QT_TRANSLATE_NOOP("FileFormats", "Word")): (".docx", ".doc"),
    str(QT_TRANSLATE_NOOP("FileFormats", "PowerPoint")): (".pptx", ".ppt"),
    str(QT_TRANSLATE_NOOP("FileFormats", "Excel")): (".xlsx", ".xlsm", ".xls"),
    str(QT_TRANSLATE_NOOP("FileFormats", "JSON Lines")): (".jsonl", ".ndjson"),
    str(QT_TRANSLATE_NOOP("FileFormats", "Configuration")): (
        ".ini",
        ".cfg",
        ".conf",
        ".properties",
    ),
    str(QT_TRANSLATE_NOOP("FileFormats", "Template")): (".jinja", ".j2", ".hbs", ".mustache"),
}

# Formats and languages known by their names, the same in every language.
_NAMES: dict[str, tuple[str, ...]] = {
    "PDF": (".pdf",),
    "EPUB": (".epub",),
    "HTML": (".html", ".htm", ".xhtml", ".xht"),
    "CSV": (".csv",),
    "TSV": (".tsv", ".tab"),
    "JSON": (".json",),
    "Python": (".py", ".pyi", ".pyw"),
    "JavaScript": (".js", ".mjs", ".cjs", ".jsx"),
    "TypeScript": (".ts", ".tsx"),
    "Java": (".java",),
    "C": (".c", ".h"),
    "C++": (".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"),
    "C#": (".cs",),
    "Go": (".go",),
    "Rust": (".rs",),
    "Ruby": (".rb",),
    "PHP": (".php",),
    "Swift": (".swift",),
    "Kotlin": (".kt", ".kts"),
    "Scala": (".scala", ".sc"),
    "Shell": (".sh", ".bash", ".zsh", ".fish"),
    "PowerShell": (".ps1", ".psm1"),
    "Batch": (".bat", ".cmd"),
    "SQL": (".sql",),
    "R": (".r",),
    "Lua": (".lua",),
    "Perl": (".pl", ".pm"),
    "Dart": (".dart",),
    "Objective-C": (".m", ".mm"),
    "Groovy": (".groovy", ".gradle"),
    "Clojure": (".clj", ".cljs", ".edn"),
    "Elixir": (".ex", ".exs"),
    "Erlang": (".erl", ".hrl"),
    "Haskell": (".hs",),
    "OCaml": (".ml", ".mli"),
    "F#": (".fs", ".fsx"),
    "Julia": (".jl",),
    "Nim": (".nim",),
    "Zig": (".zig",),
    "Verilog": (".v", ".sv"),
    "VHDL": (".vhd", ".vhdl"),
    "Assembly": (".asm", ".s"),
    "Fortran": (".f90", ".f"),
    "Pascal": (".pas",),
    "Tcl": (".tcl",),
    "CMake": (".cmake",),
    "Makefile": (".mk",),
    "Protocol Buffers": (".proto",),
    "GraphQL": (".graphql", ".gql"),
    "Solidity": (".sol",),
    "Elm": (".elm",),
    "CoffeeScript": (".coffee",),
    "Visual Basic": (".vb",),
    "CSS": (".css",),
    "Sass": (".scss", ".sass"),
    "Less": (".less",),
    "Vue": (".vue",),
    "Svelte": (".svelte",),
    "Astro": (".astro",),
    "XML": (".xml", ".xsd", ".xsl"),
    "LaTeX": (".tex",),
    "BibTeX": (".bib",),
    "reStructuredText": (".rst",),
    "AsciiDoc": (".adoc",),
    "Org": (".org",),
    "YAML": (".yaml", ".yml"),
    "TOML": (".toml",),
    "Terraform": (".tf", ".hcl"),
    "Nix": (".nix",),
    "Dockerfile": (".dockerfile",),
}

_BY_SUFFIX: dict[str, tuple[str, bool]] = {
    suffix: (label, translated)
    for table, translated in ((_DOCUMENTS, True), (_NAMES, False))
    for label, suffixes in table.items()
    for suffix in suffixes
}


def file_format(name: str) -> str:
    """The format of a file, from its name: "Markdown", "PDF", "Python", "XYZ file"."""
    suffix = PurePath(name).suffix.lower()
    known = _BY_SUFFIX.get(suffix)
    if known is not None:
        label, translated = known
        return QCoreApplication.translate(_CONTEXT, label) if translated else label
    if suffix:
        return QCoreApplication.translate("FileFormats", "{0} file").format(suffix[1:].upper())
    return QCoreApplication.translate("FileFormats", "File")
