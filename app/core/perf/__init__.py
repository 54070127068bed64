"""How fast: a step-time model on the planner's exact accounting, and closed-loop scheduling on top."""
