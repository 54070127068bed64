"""bench/release_watch.py on a hand-written fixture tree (tests/data/release_watch): citations parsed
out of planner-style comments, fingerprints that ignore docstrings and comments and see code changes,
and the report naming the citing lines. No wheel is downloaded here."""

from __future__ import annotations

from pathlib import Path

from bench import release_watch as rw

DATA = Path(__file__).resolve().parents[1] / "data" / "release_watch"


def citations() -> list[rw.Citation]:
    return rw.extract_citations([DATA / "citing.py"], root=DATA)


def test_citations_are_parsed_with_their_lines() -> None:
    keys = {c.key: c.cited_at for c in citations()}
    assert keys["config/cache.py::CacheConfig.gpu_memory_utilization"] == ("citing.py:3",)
    assert keys["config/cache.py::CacheConfig.budget"] == ("citing.py:4",)
    assert keys["v1/core/kv_cache_utils.py::allocate"] == ("citing.py:5",)
    assert keys["kv_cache_utils.py::helper"] == ("citing.py:5",)
    assert keys["CacheConfig.budget"] == ("citing.py:6",)  # backticked, no path
    # every line naming the file, for the module as a whole (watched only where no cited name resolves)
    assert keys["config/cache.py (module)"] == ("citing.py:3", "citing.py:4")
    assert not any(k.startswith("app/") for k in keys)  # the planner's own files are not vLLM's


def test_fingerprint_ignores_docstrings_and_comments_but_not_code() -> None:
    r1 = (DATA / "r1" / "vllm" / "config" / "cache.py").read_text(encoding="utf-8")
    r2 = (DATA / "r2" / "vllm" / "config" / "cache.py").read_text(encoding="utf-8")
    # budget: the docstring was reworded and a comment added, the code is the same
    assert rw.fingerprint(r1, "CacheConfig.budget") == rw.fingerprint(r2, "CacheConfig.budget") is not None
    # the default went 0.9 -> 0.92
    assert rw.fingerprint(r1, "CacheConfig.gpu_memory_utilization") != rw.fingerprint(
        r2, "CacheConfig.gpu_memory_utilization"
    )
    assert rw.fingerprint(r1, "CacheConfig.missing") is None
    assert rw.fingerprint(r1, "check") == rw.fingerprint(r2, "check")


def test_report_names_changed_added_and_the_rules_to_recheck() -> None:
    trees = [("r1", rw.DirTree(DATA / "r1")), ("r2", rw.DirTree(DATA / "r2"))]
    report = rw.build_report(trees, citations(), "vllm")
    changes = {(c.key, c.kind): c.cited_at for c in report.changes()}
    assert changes == {
        ("config/cache.py::CacheConfig.gpu_memory_utilization", "changed"): ("citing.py:3",),
        ("v1/core/kv_cache_utils.py::allocate", "changed"): ("citing.py:5",),  # found inside its class
        ("kv_cache_utils.py::helper", "added"): ("citing.py:5",),  # a suffix path resolves
    }
    # the module is not watched as a whole: names in it are cited and found
    assert "config/cache.py (module)" not in {c.key for c in report.resolved()}
    text = rw.markdown(report, "vllm")
    assert "### r2: 3 cited name(s) changed" in text
    assert (
        "- **changed** `config/cache.py::CacheConfig.gpu_memory_utilization` — re-check citing.py:3" in text
    )


def test_a_name_that_leaves_its_file_is_found_in_its_folder_and_reported_moved() -> None:
    # r3 moves the module-level helper from v1/core/kv_cache_utils.py to kv_cache_planning.py, code unchanged,
    # and drops Manager; a sibling's class Other.allocate is not taken for the cited method `allocate`
    trees = [("r2", rw.DirTree(DATA / "r2")), ("r3", rw.DirTree(DATA / "r3"))]
    report = rw.build_report(trees, citations(), "vllm")
    changes = {(c.key, c.kind): c.moved_to for c in report.changes() if c.key.startswith(("kv_", "v1/"))}
    assert changes == {
        ("kv_cache_utils.py::helper", "moved"): "vllm/v1/core/kv_cache_planning.py",
        ("v1/core/kv_cache_utils.py::allocate", "removed"): None,
    }
    assert (
        report.prints["r3"]["kv_cache_utils.py::helper"].digest
        == report.prints["r2"]["kv_cache_utils.py::helper"].digest
    )
    assert (
        "- **moved** `kv_cache_utils.py::helper` to `vllm/v1/core/kv_cache_planning.py` (update the citation) — "
        "re-check citing.py:5"
    ) in rw.markdown(report, "vllm")
