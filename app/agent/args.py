"""Checking a tool call's JSON arguments against its spec, with messages an agent can act on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.agent.errors import invalid
from app.agent.specs import ToolSpec


class ToolArgs:
    """Typed access to a tool's JSON arguments; a null value counts as absent."""

    def __init__(self, spec: ToolSpec, raw: object) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise invalid(f"{spec.name}: arguments must be a JSON object")
        allowed = spec.input_schema["properties"]
        unknown = sorted(str(k) for k in raw if k not in allowed)
        if unknown:
            raise invalid(
                f"{spec.name}: unknown argument(s) {', '.join(unknown)}; "
                f"it takes {', '.join(allowed)}"
            )
        self._raw = {str(k): v for k, v in raw.items() if v is not None}
        self._tool = spec.name

    def text(self, key: str, *, required: bool = False, max_len: int | None = None) -> str | None:
        value = self._raw.get(key)
        if value is None:
            if required:
                raise invalid(f"{self._tool}: {key} is required")
            return None
        if not isinstance(value, str) or not value:
            raise invalid(f"{self._tool}: {key} must be a non-empty string")
        if max_len is not None and len(value) > max_len:
            raise invalid(f"{self._tool}: {key} is longer than {max_len} characters")
        return value

    def required_text(self, key: str, *, max_len: int | None = None) -> str:
        value = self.text(key, required=True, max_len=max_len)
        assert value is not None
        return value

    def integer(self, key: str, *, low: int, high: int | None = None) -> int | None:
        value = self._raw.get(key)
        if value is None:
            return None
        # JSON numbers like 5.0 are fine; true/false are not numbers here.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(f"{self._tool}: {key} must be a whole number")
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise invalid(f"{self._tool}: {key} must be {bound}")
        return value

    def flag(self, key: str) -> bool:
        value = self._raw.get(key, False)
        if not isinstance(value, bool):
            raise invalid(f"{self._tool}: {key} must be true or false")
        return value

    def texts(self, key: str, *, max_items: int) -> list[str] | None:
        value = self._raw.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise invalid(f"{self._tool}: {key} must be a list of non-empty strings")
        if not value:
            raise invalid(f"{self._tool}: {key} must not be empty")
        if len(value) > max_items:
            raise invalid(f"{self._tool}: {key} takes at most {max_items} entries")
        return list(dict.fromkeys(value))

    def choice(self, key: str, options: Sequence[str]) -> str:
        value = self.required_text(key)
        if value not in options:
            raise invalid(f"{self._tool}: {key} must be one of {', '.join(options)}")
        return value
