"""What a speed figure says about your runs: one rule for every page, API and the CLI.

Your pasted runs (app.core.perf.cluster.ClusterFit) scale only the kinds of figure they measured (TPOT,
TTFT, throughput). Whether they measured every kind or some, and whether they are 1 run or N, is
decided here, once, for each thing that says it:

* :meth:`RunsScope.tag`: beside one figure of a kind the runs measured ("calibrated on your 3 runs");
* :meth:`RunsScope.caption`: a line or an answer covering every figure ("calibrated on your 3 runs",
  or "TPOT calibrated on your 1 run" when they measured only some kinds);
* :meth:`RunsScope.with_rest`: the caption and where the other figures come from (the model's fit, or
  the model extrapolating), never "the rest calibrated" beside "calibrated on your 1 run";
* :meth:`RunsScope.note`: the Speed section's note.

Each is a core :func:`~app.core.text.Text`: English in JSON and the CLI, translated by the pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.text import COMMA, Msg, Text, TextList

BAND_GROUPS = ("tpot", "ttft", "throughput")  # the kinds of figure, in the order captions name them
# each kind of figure as a caption names it (the throughput group: output, request and total tokens/s)
GROUP_NAMES = {"tpot": Text("TPOT"), "ttft": Text("TTFT"), "throughput": Text("throughput")}


@dataclass(frozen=True)
class RunsScope:
    """How many runs calibrate the figures (0: none) and which kinds of figure they measured."""

    runs: int = 0
    groups: tuple[str, ...] = ()

    @classmethod
    def of(cls, runs: int, groups: Sequence[str]) -> RunsScope:
        return cls(runs, tuple(g for g in BAND_GROUPS if g in groups) if runs else ())

    @property
    def calibrates(self) -> bool:
        """Whether any figure is scaled by your runs."""
        return self.runs > 0 and bool(self.groups)

    @property
    def every(self) -> bool:
        """Whether your runs measured every kind of figure."""
        return self.calibrates and len(self.groups) == len(BAND_GROUPS)

    def _names(self, groups: Sequence[str]) -> str:
        return TextList(COMMA, [GROUP_NAMES[g] for g in groups])

    def tag(self) -> Msg:
        """Beside one figure of a kind your runs measured; "" without runs."""
        if not self.calibrates:
            return ""
        if self.runs == 1:
            return Text("calibrated on your 1 run")
        return Text("calibrated on your {n} runs", n=self.runs)

    def caption(self) -> Msg:
        """A line covering every figure: the tag when your runs measured every kind, else which kinds."""
        if self.every or not self.calibrates:
            return self.tag()
        names = self._names(self.groups)
        if self.runs == 1:
            return Text("{figures} calibrated on your 1 run", figures=names)
        return Text("{figures} calibrated on your {n} runs", figures=names, n=self.runs)

    def with_rest(self, *, extrapolated: bool) -> Msg:
        """The caption and, when your runs measured only some kinds, where the others come from: the
        model's fit (its basis "calibrated": inside the runs it was fitted on) or its extrapolation."""
        if self.every or not self.calibrates:
            return self.caption()
        others = self._names([g for g in BAND_GROUPS if g not in self.groups])
        if extrapolated:
            return Text(
                "{calibrated}; {others} extrapolated by the model", calibrated=self.caption(), others=others
            )
        return Text("{calibrated}; {others} from the model's fit", calibrated=self.caption(), others=others)

    def note(self) -> Msg:
        """The Speed section's note: which figures your runs scale (all of them, or the kinds measured)."""
        if self.every:
            if self.runs == 1:
                return Text(
                    "Calibrated on your 1 run: every figure is scaled by this cluster's measured factors."
                )
            return Text(
                "Calibrated on your {n} runs: every figure is scaled by this cluster's measured factors.",
                n=self.runs,
            )
        figures = self._names(self.groups)
        if self.runs == 1:
            return Text(
                "Calibrated on your 1 run for {figures} only: those figures are scaled by this cluster's measured factors; the others are the model's, with its bands (your run did not measure them).",
                figures=figures,
            )
        return Text(
            "Calibrated on your {n} runs for {figures} only: those figures are scaled by this cluster's measured factors; the others are the model's, with its bands (your runs did not measure them).",
            n=self.runs,
            figures=figures,
        )


def reach_note(clients: tuple[int, int]) -> Msg:
    """Where your runs' band holds: the clients they ran at (app.core.perf.cluster.ClusterFit.reaches)."""
    low, high = clients
    if low == high:
        return Text(
            "Your runs ran at {n} clients: at other concurrencies (the curve, past a KV cliff they did not reach) each figure keeps your cluster's factor but the model's band, which your runs do not narrow there.",
            n=low,
        )
    return Text(
        "Your runs ran at {low} to {high} clients: outside that range (the curve, past a KV cliff they did not reach) each figure keeps your cluster's factor but the model's band, which your runs do not narrow there.",
        low=low,
        high=high,
    )
