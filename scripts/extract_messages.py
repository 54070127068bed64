"""Extract every user-facing message into app/i18n/messages.pot and merge it into each language's .po.

    .venv/bin/python scripts/extract_messages.py          # write messages.pot, update the .po files
    .venv/bin/python scripts/extract_messages.py --check  # exit 1 if a .po lacks an id or a translation

What is extracted (Babel): ``_()``/``gettext``/``ngettext`` in templates/ (jinja2's extractor, the
same i18n extension the app uses) and ``_()``, ``N_()`` and ``Text()`` in app/ (Python extractor;
``Text`` is app.core.text's translatable sentence), the sentences of the data files that hold some
(:func:`data_texts`) and the OpenAPI texts. Then translate the new, empty ``msgstr`` entries
in app/i18n/<lang>/LC_MESSAGES/messages.po; the app compiles the .po in memory at start-up.
tests/unit/test_i18n.py runs the same extraction and fails on any id without a translation.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALE_DIR = ROOT / "app" / "i18n"
POT = LOCALE_DIR / "messages.pot"
LANGUAGES = ("zh",)
KEYWORDS = {**DEFAULT_KEYWORDS, "N_": None, "Text": None, "t": None}
JINJA_OPTIONS = {"extensions": "jinja2.ext.i18n", "trim_blocks": "true", "lstrip_blocks": "true"}


def _wanted_directory(dirpath: str | Path) -> bool:
    """Babel skips folders starting with "_" by default; templates/_partials must be read."""
    name = Path(dirpath).name
    return not name.startswith(".") and name != "__pycache__"


def extract() -> Catalog:
    """One catalog holding every message id of the templates and the Python code."""
    catalog = Catalog(project="KV Planner", fuzzy=False)
    sources = (
        (ROOT / "templates", [("**.html", "jinja2")], {"**.html": JINJA_OPTIONS}),
        (ROOT / "app", [("**.py", "python")], {}),
    )
    for directory, method_map, options in sources:
        for filename, lineno, message, comments, context in extract_from_dir(
            directory,
            method_map,
            options,
            keywords=KEYWORDS,
            strip_comment_tags=True,
            directory_filter=_wanted_directory,
        ):
            if not message or (isinstance(message, str) and not message.strip()):
                continue
            where = (str((directory / filename).relative_to(ROOT)), lineno)
            catalog.add(message, None, [where], auto_comments=comments, context=context)
    for where, text in [*openapi_texts(), *data_texts()]:
        catalog.add(text, None, [where])
    return catalog


def data_texts() -> list[tuple[tuple[str, int], str]]:
    """Sentences kept in data files (app/core/verdicts.yaml, app/core/workload/presets.yaml,
    app/core/formulas.yaml, app/web/version_notes.yaml): each module that loads one lists them."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from app.core import equations, verdicts
    from app.core.workload import presets
    from app.web import version_notes

    return [
        *verdicts.message_ids(),
        *presets.message_ids(),
        *equations.message_ids(),
        *version_notes.message_ids(),
    ]


def openapi_texts() -> list[tuple[tuple[str, int], str]]:
    """The /docs page lists each endpoint's summary and docstring (the OpenAPI schema): message ids too."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from app.web.app import create_app

    found = []
    for path, operations in create_app().openapi()["paths"].items():
        for method, operation in operations.items():
            for key in ("summary", "description"):
                text = operation.get(key)
                if text and text.strip():
                    found.append(((f"openapi:{method}{path}", 0), text))
    return found


def missing(template: Catalog, lang: str) -> list[str]:
    """Ids of ``template`` that the language's .po lacks or leaves empty."""
    with (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as fp:
        po = read_po(fp, locale=lang)
    out = []
    for message in template:
        if not message.id:
            continue
        found = po.get(message.id, context=message.context)
        strings = found.string if found is not None else None
        values = strings if isinstance(strings, tuple) else (strings,)
        if found is None or not all(v and str(v).strip() for v in values):
            out.append(message.id if isinstance(message.id, str) else message.id[0])
    return out


# a real %-directive: "%s", "%d", "%(name)s", "%%"; "5 % requests" is not one, though Babel flags it python-format
# ("% r") and msgfmt then fails the Chinese "5%，" (tests/unit/test_i18n.py)
PERCENT_FIELD = re.compile(r"%(\(\w+\))?[sd%]")


def _drop_false_percent_flags(catalog: Catalog) -> None:
    for message in catalog:
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        if "python-format" in message.flags and not any(PERCENT_FIELD.search(i) for i in ids if i):
            message.flags.discard("python-format")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report missing translations")
    args = parser.parse_args()
    template = extract()
    _drop_false_percent_flags(template)
    if args.check:
        gaps = {lang: missing(template, lang) for lang in LANGUAGES}
        for lang, ids in gaps.items():
            for msgid in ids:
                print(f"{lang}: missing {msgid!r}")
        return 1 if any(gaps.values()) else 0
    with POT.open("wb") as fp:
        write_po(fp, template, width=100, omit_header=False, sort_output=True)
    for lang in LANGUAGES:
        path = LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po"
        if path.is_file():
            with path.open("rb") as fp:
                po = read_po(fp, locale=lang)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            po = Catalog(locale=lang, project="KV Planner")
        po.update(template, no_fuzzy_matching=True)
        _drop_false_percent_flags(po)
        with path.open("wb") as fp:
            write_po(fp, po, width=100, ignore_obsolete=True, sort_output=True)
        print(f"{path.relative_to(ROOT)}: {len(template)} ids, {len(missing(template, lang))} untranslated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
