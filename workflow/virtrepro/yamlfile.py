"""The project's YAML files, read strictly: a key given twice is an error, not the last value.

PyYAML's ``safe_load`` keeps the last of two equal keys in a mapping without a word, so a
configuration that sets ``repetitions`` twice runs with whichever came last. :func:`load` (a file)
and :func:`loads` (a text and where it came from) read YAML as ``safe_load`` does and refuse a key
given twice in one mapping with a :class:`YamlFileError` naming the file, the line and the key
(``config/my.yaml:12: key 'scales.quick.mbw.repetitions' given twice (first on line 9)``); broken
YAML names the file, line and column, and a file that cannot be read names the file. A merge key
(``<<: *anchor``) may still be overridden by the mapping's own keys, as YAML means it.
Standard library and PyYAML only: it sits beside :mod:`virtrepro.errors` at the bottom of the imports.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from .errors import VirtreproError

MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlFileError(VirtreproError, ValueError):
    """A YAML file (or text) that cannot be read, is not YAML, or gives a key twice."""


def _where(source: str, mark) -> str:
    return f"{source}:{mark.line + 1}" if mark is not None else source


def _key_text(path: list[str]) -> str:
    return "".join(part if part.startswith("[") else f".{part}" for part in path).lstrip(".")


def _check_keys(node, source: str, path: list[str], seen: set[int], keys: yaml.constructor.SafeConstructor) -> None:
    """Raise YamlFileError at the first mapping (in document order) that has a key twice; ``keys``
    constructs a key as the document will (``1`` and ``1.0`` are one key, ``'1'`` another)."""
    if id(node) in seen:  # an alias: its anchor's node was checked where it was defined
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_keys(item, source, [*path, f"[{index}]"], seen, keys)
    elif isinstance(node, yaml.MappingNode):
        first: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:
                _check_keys(value_node, source, path, seen, keys)
                continue
            try:
                key = keys.construct_object(key_node, deep=True)
                hash(key)
            except (yaml.YAMLError, TypeError):  # an unhashable key: safe_load refuses it itself
                key, shown = None, None
            else:
                shown = str(key)
            if shown is not None and key in first:
                raise YamlFileError(f"{_where(source, key_node.start_mark)}: key {_key_text([*path, shown])!r} "
                                    f"given twice (first on line {first[key].start_mark.line + 1})")
            if shown is not None:
                first[key] = key_node
            _check_keys(value_node, source, [*path, shown or "?"], seen, keys)


# libyaml's parser where PyYAML has it (several times faster: the workflow reads its configuration, the
# schema's declarations and the claims at every start); the same nodes and values as the pure-Python one
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def loads(text: str, source: str):
    """The YAML document in ``text`` (``source`` names where it came from, e.g. the file), as
    ``yaml.safe_load`` reads it; YamlFileError for broken YAML or a key given twice in a mapping."""
    if _FAST_LOADER is not yaml.SafeLoader:
        try:
            return _load(text, source, _FAST_LOADER)
        except yaml.YAMLError:
            pass  # broken YAML: read again below, so that the message (line, column, problem) is PyYAML's own
    return _load(text, source, yaml.SafeLoader)


def _load(text: str, source: str, loader_class):
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_keys(node, source, [], set(), yaml.constructor.SafeConstructor())
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        if loader_class is not yaml.SafeLoader:
            raise
        mark = getattr(error, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise YamlFileError(f"{where}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()


def load(path: str | Path):
    """The YAML document in the file ``path`` (see :func:`loads`); YamlFileError also when the file
    cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise YamlFileError(f"{path}: {reason}") from None
    return loads(text, str(path))
