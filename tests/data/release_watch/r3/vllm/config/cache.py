"""Fixture: the same module in release r2 — the docstrings and comments changed, one default changed."""


class CacheConfig:
    # the default was raised
    gpu_memory_utilization: float = 0.92

    def budget(self, total: int) -> int:
        """How many bytes this instance may use (reworded docstring: no rule change)."""
        return int(total * self.gpu_memory_utilization)  # same code


def check(x: int) -> bool:
    return x > 0
