"""Fixture: r3 moves the manager out of this module (as 0.33.0 moved check_enough_kv_cache_memory)."""


def helper() -> int:
    return 1
