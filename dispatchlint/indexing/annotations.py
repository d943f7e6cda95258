"""Names and annotations read as strings: what the stages after indexing share with the indexer.

No libcst here: a run whose facts all come from the cache (a warm run) never loads the parser.
"""

from __future__ import annotations

import re
from typing import Optional

from dispatchlint.runtime.contract import ARGUMENT_PARAMETER_NAMES

#: Parameter and variable names that, by convention, hold a tool call's arguments mapping: the runtime's list,
#: so that a table the fix wraps hands the repaired mapping to the parameter the analyzer followed.
ARGS_NAMES = ARGUMENT_PARAMETER_NAMES


_ANNOTATED_CLASS = re.compile(r"^['\"]?(?:Optional\[)?([A-Za-z_][\w.]*)\]?['\"]?$")


def annotated_class(annotation: str) -> Optional[str]:
    """The class a parameter annotation names: ``BaseTool``, ``"BaseTool"``, ``Optional[tools.BaseTool]``."""
    match = _ANNOTATED_CLASS.match(annotation.strip())
    return match.group(1) if match else None


_MAPPING_OF = re.compile(
    r"^['\"]?(?:typing\.)?(?:dict|Dict|Mapping|MutableMapping)\[\s*str\s*,\s*['\"]?([A-Za-z_][\w.]*)['\"]?"
    r"\s*(?:\|.*)?\]['\"]?$"
)


def mapping_value_class(annotation: str) -> Optional[str]:
    """The class of the values a mapping annotation declares (the first of a union): ``dict[str, SamplingTool]``,
    ``dict[str, Tool | ToolBuiltIn]`` -> ``SamplingTool``, ``Tool``."""
    match = _MAPPING_OF.match(annotation.strip())
    return match.group(1) if match else None


_SEQUENCE_OF = re.compile(
    r"^['\"]?(?:typing\.)?(?:list|List|Sequence|Iterable|tuple|Tuple|set|Set|frozenset|FrozenSet)"
    r"\[\s*['\"]?([A-Za-z_][\w.]*)['\"]?\s*(?:\||\]|,\s*\.\.\.\s*\])"
)


def sequence_element_class(annotation: str) -> Optional[str]:
    """The class of the items a sequence annotation declares (the first of a union): ``list[BaseTool]``,
    ``Sequence[BaseTool | StructuredTool]`` -> ``BaseTool``."""
    match = _SEQUENCE_OF.match(annotation.strip())
    return match.group(1) if match else None


def class_schema_key(class_qualname: str) -> str:
    """The ``SchemaDef.tool`` of a schema declared on a tool class, until the class is known by a tool name."""
    return f"<class {class_qualname}>"
