"""Fixture: r1 has no helper; r2 adds it."""


class Manager:
    def allocate(self, n: int) -> list[int]:
        return [0] * n
