"""Fixture: r3's new home of helper, its code unchanged; another class happens to have an allocate method."""


def helper() -> int:
    return 1


class Other:
    def allocate(self, n: int) -> list[int]:
        return [1] * n
