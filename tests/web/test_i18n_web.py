"""Language choice on the pages (query -> cookie -> Accept-Language) and a language-neutral API."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

from app.web.app import create_app
from app.web.i18n import LANGUAGES
from app.web.templating import make_environment

PLANNER = "/?v=1&max_model_len=131072&target_concurrency=64"


def client() -> TestClient:
    return TestClient(create_app())


def test_default_is_english_and_unchanged_links() -> None:
    r = client().get(PLANNER)
    assert r.status_code == 200
    assert '<html lang="en">' in r.text and "Planner" in r.text
    assert "set-cookie" not in r.headers
    assert "lang=" not in r.text.split('id="permalink"', 1)[1].split(">", 1)[0]


def test_lang_query_gives_chinese_and_sets_the_cookie() -> None:
    r = client().get(PLANNER + "&lang=zh")
    assert '<html lang="zh-CN">' in r.text
    assert "规划器" in r.text and "单卡显存的每个字节去了哪里" in r.text
    cookie = r.headers["set-cookie"]
    assert "lang=zh" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert r.headers["content-language"] == "zh-CN"


def test_cookie_alone_gives_chinese() -> None:
    c = client()
    c.cookies.set("lang", "zh")
    assert '<html lang="zh-CN">' in c.get("/doctor").text


def test_accept_language_gives_chinese_and_query_wins() -> None:
    c = client()
    assert "规划器" in c.get("/explore", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).text
    r = c.get("/?lang=en", headers={"Accept-Language": "zh-CN"})
    assert '<html lang="en">' in r.text


def test_permalink_round_trip_keeps_lang() -> None:
    c = client()
    r = c.get(PLANNER + "&lang=zh", headers={"HX-Request": "true"})
    link = r.headers["HX-Replace-Url"]
    assert parse_qs(urlsplit(link).query)["lang"] == ["zh"]
    again = client().get(link)  # no cookie: the link alone opens in Chinese
    assert '<html lang="zh-CN">' in again.text
    assert parse_qs(urlsplit(link).query)["max_model_len"] == ["131072"]


def test_header_switch_links_keep_the_other_parameters() -> None:
    r = client().get(PLANNER)
    assert 'id="lang-zh"' in r.text
    href = r.text.split('id="lang-zh" href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    query = parse_qs(urlsplit(href).query)
    assert (
        query["lang"] == ["zh"]
        and query["max_model_len"] == ["131072"]
        and query["target_concurrency"] == ["64"]
    )


def test_under_a_root_path_the_cookie_path_follows() -> None:
    r = TestClient(create_app(root_path="/tools/kvplan")).get("/tools/kvplan/?lang=zh")
    assert "Path=/tools/kvplan" in r.headers["set-cookie"]


def test_api_is_language_neutral_except_messages() -> None:
    c = client()
    en = c.get("/api/estimate?v=1&max_model_len=8192").json()
    zh = c.get("/api/estimate?v=1&max_model_len=8192&lang=zh", headers={"Accept-Language": "zh-CN"}).json()
    assert en.keys() == zh.keys() and en["warnings"] == zh["warnings"] and en["verdict"] == zh["verdict"]
    assert "lang" not in zh["inputs"]
    bad = c.get("/api/estimate?v=1&model=nope/none", headers={"Accept-Language": "zh-CN"})
    assert bad.status_code == 422
    detail = bad.json()["detail"][0]
    assert detail["loc"] == ["query", "model"] and detail["type"] == "UnknownModelError"
    assert detail["msg"].startswith("未知模型")
    english = c.get("/api/estimate?v=1&model=nope/none").json()["detail"][0]["msg"]
    assert english.startswith("unknown model")


def test_api_recommend_and_diagnose_messages_follow_accept_language() -> None:
    c = client()
    r = c.post(
        "/api/diagnose", content=b"   ", headers={"Accept-Language": "zh", "Content-Type": "text/plain"}
    )
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "log"]
    body = {
        "model": "meta-llama/Llama-3.1-8B",
        "device": "nvidia-h100-sxm-80gb",
        "target_max_model_len": 131072,
        "target_concurrency": 64,
    }
    en = c.post("/api/recommend", json=body).json()
    zh = c.post("/api/recommend", json=body, headers={"Accept-Language": "zh-CN"}).json()
    assert en == zh  # steps, reasons, bisection: data, in English


# Pages whose templates hold literal _("…") calls: the compile-time translation must change nothing.
FOLDED_PAGES = (
    PLANNER,
    "/?v=1&max_model_len=2000000",  # the error verdict
    "/doctor",
    "/explore",
    "/compare?v=1",
    "/recommend?v=1&max_model_len=131072&target_concurrency=64",
)


def test_compile_time_translation_renders_what_runtime_gettext_renders() -> None:
    """Renderer translates literal ``_("…")`` when it compiles a template (ConstantMessages); the
    HTML must be byte for byte what jinja's runtime gettext gives, in both languages, page and block."""
    folded = TestClient(create_app())
    runtime_app = create_app()
    runtime_app.state.renderer.envs = {lang: make_environment() for lang in LANGUAGES}
    runtime = TestClient(runtime_app)
    compared = 0
    for path in FOLDED_PAGES:
        for lang in LANGUAGES:
            url = f"{path}{'&' if '?' in path else '?'}lang={lang}"
            for headers in ({}, {"HX-Request": "true"}):
                a, b = folded.get(url, headers=headers), runtime.get(url, headers=headers)
                assert a.status_code == b.status_code, url
                assert a.text == b.text, (url, headers)
                compared += 1
    assert compared == len(FOLDED_PAGES) * 4
    # and the folding did happen: a literal message of results.html is in the compiled code as text
    source = folded_source("zh")
    assert "单卡显存的每个字节去了哪里" in source and "Where each byte of one device goes" not in source


def folded_source(lang: str) -> str:
    env = make_environment(lang)
    assert env.loader is not None
    text, _, _ = env.loader.get_source(env, "_partials/results.html")
    return str(env.compile(text, raw=True))


def test_rejected_inputs_are_named_in_chinese_on_the_page_and_in_the_api() -> None:
    c = client()
    page = c.get(
        "/?v=1&lang=zh&max_model_len=5&tensor_parallel_size=3&gpu_memory_utilization=1.5&model="
    ).text
    banner = page[page.index('data-unusable="') : page.index("</div>", page.index('data-unusable="'))]
    assert "<code>max_model_len</code>: 应大于或等于 16" in banner  # pydantic's greater_than_equal, ge=16
    assert "<code>tensor_parallel_size</code>: 必须是 2 的幂（1, 2, 4, 8, 16, 32, 64, 128, 256）" in banner
    assert "<code>gpu_memory_utilization</code>: 应小于或等于 1" in banner  # le=1.0 printed as pydantic does
    assert "<code>model</code>: 至少应有 1 个字符" in banner
    assert "Input should" not in banner and "Value error" not in banner
    # the same inputs in English keep pydantic's own wording
    english = client().get("/?v=1&max_model_len=5").text
    assert "<code>max_model_len</code>: Input should be greater than or equal to 16" in english
    # the API: msg follows Accept-Language, the rest stays as pydantic gives it
    r = client().get("/api/estimate?vllm_version=0.5.4", headers={"Accept-Language": "zh-CN"})
    (error,) = r.json()["detail"]
    assert (
        r.status_code == 422 and error["loc"] == ["query", "vllm_version"] and error["type"] == "value_error"
    )
    assert error["msg"] == "vLLM 0.5.4 早于 0.6，规划器建模的最早版本是 0.6"
    r = client().get("/api/estimate?max_model_len=5", headers={"Accept-Language": "zh"})
    assert r.json()["detail"][0]["msg"] == "应大于或等于 16" and r.json()["detail"][0]["ctx"] == {"ge": 16}
    assert client().get("/api/estimate?max_model_len=5").json()["detail"][0]["msg"] == (
        "Input should be greater than or equal to 16"
    )
