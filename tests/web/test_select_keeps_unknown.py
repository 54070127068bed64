"""A select fed from the URL keeps a value it does not list, so the error naming the field stays.

Lane page12 item 1. Before (main at 169e6d0) `/?device=h999` rendered the error naming `device`, but no
option of the Device select was selected, so the browser selected its first one (H100): the next slider
move posted `device=nvidia-h100-sxm-80gb`, the error vanished and the page showed a verdict — and an
address — for a device the user never named. The same held for every select fed from the URL (vLLM
version, KV dtype, TP, prefix caching, quantization, dataset, the model card's dtype and attention; the
fleet's device and version; the explore page's). /compare?a=zz showed the error with the select, the title
and the rule table on 0.19.0, a release the user did not name.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from app.web.app import create_app
from tests.web.helpers import unusable_fields

APP = create_app()


class _Selects(HTMLParser):
    """name -> (selected value or None, whether that option is marked data-unknown, its label)."""

    def __init__(self) -> None:
        super().__init__()
        self.current: str | None = None
        self.in_selected = False
        self.found: dict[str, tuple[str | None, bool, str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "select":
            self.current = named.get("name")
            if self.current is not None:
                self.found[self.current] = (None, False, "")
        elif tag == "option" and self.current is not None and "selected" in named:
            self.found[self.current] = (named.get("value"), "data-unknown" in named, "")
            self.in_selected = True

    def handle_data(self, data: str) -> None:
        if self.in_selected and self.current is not None:
            value, unknown, label = self.found[self.current]
            self.found[self.current] = (value, unknown, label + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "option":
            self.in_selected = False
        elif tag == "select":
            self.current = None


def verdict_fields(page: str) -> list[str]:
    """The fields the error in the verdict's place names (the unusable list, or a domain error's field)."""
    start = page.index('id="verdict"')
    return re.findall(r"<code>([^<]+)</code>", page[start : page.index("</div>", start)])


def selects(page: str) -> dict[str, tuple[str | None, bool, str]]:
    parser = _Selects()
    parser.feed(page)
    return parser.found


# (page, field, a value it cannot use); each select on that page that the URL fills
CASES = [
    ("/", "device", "h999"),
    ("/", "vllm_version", "banana"),
    ("/", "kv_cache_dtype", "FP8"),  # vLLM's choices are lower case
    ("/", "tensor_parallel_size", "3"),
    ("/", "enable_prefix_caching", "maybe"),
    ("/", "quantization", "zzz"),
    ("/", "dataset_name", "sonnet"),  # a vllm bench dataset the speed model does not take
    ("/", "card_dtype", "fp12"),
    ("/", "card_attention", "linear"),
    ("/explore", "device", "h999"),
    ("/explore", "vllm_version", "banana"),
    ("/explore", "kv_cache_dtype", "FP8"),
    ("/explore", "enable_prefix_caching", "maybe"),
    ("/fleet", "device", "h999"),
    ("/fleet", "vllm_version", "banana"),
    ("/compare", "a", "banana"),
    ("/compare", "b", "banana"),
]


@pytest.mark.parametrize(("path", "field", "value"), CASES, ids=[f"{p}:{f}" for p, f, _ in CASES])
def test_the_select_keeps_the_unknown_value_and_the_error(path: str, field: str, value: str) -> None:
    page = TestClient(APP).get(path, params={"v": "1", field: value})
    assert page.status_code == 422
    assert field in verdict_fields(page.text)
    chosen, unknown, label = selects(page.text)[field]
    assert (chosen, unknown) == (value, True)  # it posts back on the next change, the error with it
    assert label == f"{value} (unknown)"


def test_the_unknown_label_is_translated() -> None:
    page = TestClient(APP).get("/", params={"v": "1", "device": "h999", "lang": "zh"})
    assert selects(page.text)["device"] == ("h999", True, "h999（未知）")


def test_a_listed_or_normalised_value_gets_no_unknown_option() -> None:
    # H100 is the catalog alias of nvidia-h100-sxm-80gb, v0.19.0 vLLM's tag of 0.19.0, 1 pydantic's true
    page = TestClient(APP).get(
        "/", params={"v": "1", "device": "H100", "vllm_version": "v0.19.0", "enable_prefix_caching": "1"}
    )
    assert page.status_code == 200
    found = selects(page.text)
    assert found["device"] == ("nvidia-h100-sxm-80gb", False, found["device"][2])
    assert found["vllm_version"][:2] == ("0.19.0", False)
    assert found["enable_prefix_caching"][:2] == ("true", False)
    assert "data-unknown" not in page.text


def test_the_next_change_posts_it_back_and_the_error_and_address_stay() -> None:
    # what htmx sends on a slider move: the form's fields, the select's (now selected) unknown option
    form = {"v": "1", "model": "meta-llama/Llama-3.1-8B", "device": "h999", "gpu_memory_utilization": "0.85"}
    response = TestClient(APP).post("/", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert unusable_fields(response.text) == ["device"]
    assert "data-verdict" not in response.text
    address = parse_qs(urlsplit(response.headers["HX-Replace-Url"]).query)
    assert address["device"] == ["h999"]


def test_compare_names_the_typed_release_not_a_default() -> None:
    page = TestClient(APP).get("/compare", params={"a": "banana", "b": "0.33.0"})
    assert page.status_code == 422
    assert "Compare vLLM banana and 0.33.0" in page.text
    assert 'id="rule-differences"' not in page.text  # 0.19.0's rules are no answer to "banana"
    assert selects(page.text)["b"][:2] == ("0.33.0", False)


def test_the_doctor_keeps_an_unknown_device() -> None:
    response = TestClient(APP).post("/doctor", data={"log": "INFO x", "device": "h999"})
    assert response.status_code == 422
    assert 'data-field="device"' in response.text
    assert selects(response.text)["device"][:2] == ("h999", True)


def test_the_fleet_phone_summary_names_the_field() -> None:
    # the planner's one-line phone verdict names the unusable field; the fleet's said only "Nothing is computed"
    page = TestClient(APP).get("/fleet", params={"v": "1", "device": "h999"}).text
    summary = page[page.index('id="phone-summary"') : page.index("</a>", page.index('id="phone-summary"'))]
    assert re.findall(r"<code>([^<]+)</code>", summary) == ["device"]


# every checkbox fed from the URL: an unreadable boolean left it unchecked, so the next change posted
# nothing and computed "false" for it (the error and the address's value gone), as a select did
CHECKBOXES = [
    ("/", "enforce_eager"),
    ("/", "allow_long_max_model_len"),
    ("/", "bench_serve"),
    ("/", "ignore_eos"),
    ("/", "enable_lora"),
    ("/", "fully_sharded_loras"),
    ("/", "enable_expert_parallel"),
    ("/explore", "lora"),
    ("/explore", "mm"),
    ("/explore", "cache_salt"),
    ("/fleet", "no_fp8_kv"),
    ("/fleet", "no_quantized_weights"),
    ("/fleet", "bench_serve"),
    ("/fleet", "ignore_eos"),
]


def _checkbox(page: str, name: str) -> str:
    match = re.search(
        rf'<input[^>]*type="checkbox" name="{name}"[^>]*>[^<]*(?:<span class="unknown-value">[^<]*)?', page
    )
    assert match, name
    return match.group(0)


@pytest.mark.parametrize(("path", "field"), CHECKBOXES, ids=[f"{p}:{f}" for p, f in CHECKBOXES])
def test_a_checkbox_keeps_an_unreadable_value(path: str, field: str) -> None:
    page = TestClient(APP).get(path, params={"v": "1", field: "maybe"})
    assert page.status_code == 422
    assert field in verdict_fields(page.text)
    box = _checkbox(page.text, field)
    assert 'value="maybe" checked data-unknown' in box
    assert box.endswith('<span class="unknown-value">maybe (unknown)')


def test_a_readable_checkbox_is_ordinary() -> None:
    page = TestClient(APP).get("/", params={"v": "1", "enforce_eager": "1"}).text  # pydantic reads 1 as true
    assert _checkbox(page, "enforce_eager").startswith(
        '<input type="checkbox" name="enforce_eager" value="true" checked>'
    )
    assert "data-unknown" not in page


def test_an_unknown_workload_preset_checks_no_known_one() -> None:
    # /explore?preset=zzz named preset but checked the default (mixed_long_short): the next change computed it
    page = TestClient(APP).get("/explore", params={"v": "1", "preset": "zzz"})
    assert page.status_code == 422
    assert "preset" in verdict_fields(page.text)
    assert re.findall(r'name="preset" value="([^"]*)" checked', page.text) == ["zzz"]
    assert "zzz (unknown)" in page.text
