# KV Planner as a container: the wheel (templates, static files, specs and translations inside it)
# installed with the locked dependencies on a slim Python, run as a non-root user.
#
#   docker build -t kv-planner .
#   docker run -p 8000:8000 -e KVPLAN_ROOT_PATH=/tools/kvplan kv-planner
#
# See docs/deploy.md (compose behind nginx under a sub-path). The server makes no outbound request
# unless KVPLAN_ALLOW_HUB=1 (then only to HF_ENDPOINT).

# 3.13: CPython's cookie parser is quadratic before 3.11.10 / 3.12.6 / 3.13.0 (docs/security.md)
ARG PYTHON_IMAGE=python:3.13-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml requirements.lock ./
COPY app ./app
COPY templates ./templates
COPY static ./static
COPY model_specs ./model_specs
COPY device_specs ./device_specs
COPY docs ./docs
RUN python -m pip wheel --no-cache-dir --no-deps . -w /wheels

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    KVPLAN_PORT=8000 \
    KVPLAN_ROOT_PATH="" \
    KVPLAN_WORKERS=""
COPY --from=build /wheels /wheels
COPY requirements.lock /tmp/requirements.lock
# -c: the wheel's dependencies at exactly the versions the tests ran with (the lock file's dev-only
# entries are constraints only, so they are not installed)
RUN python -m pip install --no-cache-dir -c /tmp/requirements.lock /wheels/kv_planner-*.whl \
    && rm -rf /wheels /tmp/requirements.lock \
    && groupadd --system --gid 10001 kv-planner \
    && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin kv-planner
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('KVPLAN_PORT', '8000'), timeout=4)"]
# sh -c so the environment sets the prefix, port and workers at `docker run` time; `exec` so kv-planner
# replaces the shell as PID 1 and receives `docker stop`'s SIGTERM itself.
CMD ["sh", "-c", "exec kv-planner serve --host 0.0.0.0 --port \"${KVPLAN_PORT}\" --root-path \"${KVPLAN_ROOT_PATH}\" ${KVPLAN_WORKERS:+--workers \"${KVPLAN_WORKERS}\"}"]
