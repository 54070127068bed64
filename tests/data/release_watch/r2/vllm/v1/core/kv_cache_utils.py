"""Fixture: r2 adds a helper and changes a method."""


class Manager:
    def allocate(self, n: int) -> list[int]:
        return [0] * (n + 1)


def helper() -> int:
    return 1
