"""Fixture: r3 moves helper out of this module (as 0.33.0 moved check_enough_kv_cache_memory) and drops Manager."""
