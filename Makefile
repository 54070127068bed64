# Every routine in one place. `make serve` and `make test` bootstrap themselves on a fresh machine.
PY := .venv/bin/python
STAMP := .venv/.installed

.PHONY: serve test unit e2e lint bench accuracy browser wheel

# .venv is built with the newest CPython that has the cookie fix (3.11.10+, 3.12.6+, 3.13+), found by
# scripts/find_python.py on PATH and in pyenv (`make PYTHON=/path/to/python3` overrides); a .venv made
# with an unpatched one is rebuilt. Why: docs/security.md, "The Python floor".
$(STAMP): pyproject.toml requirements.lock
	@python3 scripts/find_python.py --check-venv .venv || rm -rf .venv
	test -x $(PY) || "$$(python3 scripts/find_python.py)" -m venv .venv
	$(PY) -m pip install -q -r requirements.lock
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	@command -v nginx >/dev/null || (apt-get update -qq && apt-get install -y -qq nginx >/dev/null)
	@# a CJK font so Chromium renders the Chinese pages (tests/e2e/test_i18n_e2e.py screenshots)
	@test -f /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc || (apt-get update -qq && apt-get install -y -qq fonts-wqy-zenhei >/dev/null)

serve: $(STAMP)
	.venv/bin/kv-planner serve --host 127.0.0.1 --port 8000

test: $(STAMP) browser
	$(PY) -m ruff check app tests bench
	$(PY) -m mypy
	$(PY) -m pytest

unit: $(STAMP)
	$(PY) -m pytest tests/unit tests/web

lint: $(STAMP)
	$(PY) -m ruff check app tests bench
	$(PY) -m ruff format --check app tests bench
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) bench/speed.py

accuracy: $(STAMP)
	$(PY) bench/accuracy.py

# dist/kv_planner-*.whl: templates, static files, specs, docs and translations inside (docs/deploy.md)
wheel: $(STAMP)
	$(PY) -m pip wheel -q --no-deps . -w dist
