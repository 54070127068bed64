"""Fixture: r3's new home of the manager, its code unchanged."""


class Manager:
    def allocate(self, n: int) -> list[int]:
        return [0] * (n + 1)
