"""Checking server answers against the bundled MCP 2025-11-25 JSON Schema."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path("/work/shared/spec/schema/2025-11-25/schema.json")


@functools.cache
def _defs() -> dict[str, Any]:
    defs: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    return defs


def assert_valid(definition: str, instance: object) -> None:
    """Fail unless ``instance`` validates as ``$defs[definition]`` of the 2025-11-25 schema."""
    validator = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": _defs()})
    errors = [error.message for error in validator.iter_errors(instance)]
    assert not errors, f"{definition}: {errors}"
