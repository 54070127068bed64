"""Fixture: planner-style citations (read as text by tests/unit/test_release_watch.py, never imported)."""

# config/cache.py::CacheConfig.gpu_memory_utilization is the default (vllm/config/cache.py)
# config/cache.py::CacheConfig.budget multiplies the total
# v1/core/kv_cache_utils.py `allocate` (a method cited by its bare name); kv_cache_utils.py::helper
# `CacheConfig.budget` again without a path; app/core/kv.py::not_vllm is the planner's own
