"""Fixture: a cited module in release r1 (hand-written, not vLLM's code)."""


class CacheConfig:
    gpu_memory_utilization: float = 0.9

    def budget(self, total: int) -> int:
        """Bytes this instance may use."""
        return int(total * self.gpu_memory_utilization)


def check(x: int) -> bool:
    return x > 0
