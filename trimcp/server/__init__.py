"""User-facing server API: the building blocks of the decorator API, so far.

Today this package holds the pure, I/O-free pieces that ``@server.tool()``,
``@server.resource()`` and ``@server.prompt()`` will stand on: JSON Schema derivation from
signatures (``_schema``), argument validation and conversion (``_validation``), RFC 6570 URI
templates (``_uri_template``) and opaque list cursors (``_pagination``). The decorator class,
dispatch and sessions come later; transports and the protocol core are its neighbours below
(``trimcp.protocol``), the built-in skills its users above.
"""

from __future__ import annotations

from ._docstrings import Docstring as Docstring
from ._docstrings import parse_docstring as parse_docstring
from ._hints import SchemaError as SchemaError
from ._pagination import CursorCodec as CursorCodec
from ._pagination import InvalidCursor as InvalidCursor
from ._pagination import Page as Page
from ._pagination import Paginator as Paginator
from ._pagination import snapshot_of as snapshot_of
from ._schema import Context as Context
from ._schema import FunctionSchema as FunctionSchema
from ._schema import OutputError as OutputError
from ._schema import OutputSpec as OutputSpec
from ._schema import Param as Param
from ._schema import ParameterSpec as ParameterSpec
from ._schema import derive_function_schema as derive_function_schema
from ._schema import derive_output_schema as derive_output_schema
from ._schema import schema_for_type as schema_for_type
from ._schema import structured_content as structured_content
from ._schema import to_jsonable as to_jsonable
from ._uri_template import TemplateError as TemplateError
from ._uri_template import UriTemplate as UriTemplate
from ._validation import ArgumentError as ArgumentError
from ._validation import ArgumentProblem as ArgumentProblem
from ._validation import CallArguments as CallArguments
from ._validation import UnsupportedDialect as UnsupportedDialect
from ._validation import validate_arguments as validate_arguments
from ._validation import validate_structured_content as validate_structured_content

__all__ = [
    "ArgumentError",
    "ArgumentProblem",
    "CallArguments",
    "Context",
    "CursorCodec",
    "Docstring",
    "FunctionSchema",
    "InvalidCursor",
    "OutputError",
    "OutputSpec",
    "Page",
    "Paginator",
    "Param",
    "ParameterSpec",
    "SchemaError",
    "TemplateError",
    "UnsupportedDialect",
    "UriTemplate",
    "derive_function_schema",
    "derive_output_schema",
    "parse_docstring",
    "schema_for_type",
    "snapshot_of",
    "structured_content",
    "to_jsonable",
    "validate_arguments",
    "validate_structured_content",
]
