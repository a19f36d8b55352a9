"""Source code and configuration files: the text as it is, decoded like any text file."""

from __future__ import annotations

CODE_EXTENSIONS = frozenset(
    {
        # programming languages
        ".py", ".pyi", ".pyw", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx",
        ".java", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".cs", ".go", ".rs",
        ".rb", ".php", ".swift", ".kt", ".kts", ".scala", ".sc", ".sh", ".bash", ".zsh",
        ".fish", ".ps1", ".psm1", ".bat", ".cmd", ".sql", ".r", ".lua", ".pl", ".pm", ".dart",
        ".m", ".mm", ".groovy", ".gradle", ".clj", ".cljs", ".edn", ".ex", ".exs", ".erl",
        ".hrl", ".hs", ".ml", ".mli", ".fs", ".fsx", ".jl", ".nim", ".zig", ".v", ".sv",
        ".vhd", ".vhdl", ".asm", ".s", ".f90", ".f", ".pas", ".tcl", ".cmake", ".mk",
        ".proto", ".graphql", ".gql", ".sol", ".elm", ".coffee", ".vb",
        # markup, styles and templates
        ".css", ".scss", ".sass", ".less", ".vue", ".svelte", ".astro", ".xml", ".xsd",
        ".xsl", ".jinja", ".j2", ".hbs", ".mustache", ".tex", ".bib", ".rst", ".adoc",
        ".org",
        # configuration
        ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties", ".tf",
        ".hcl", ".nix", ".dockerfile",
    }
)  # fmt: skip
