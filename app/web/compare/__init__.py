"""Compare: the planner's inputs under two vLLM releases, side by side, with the rules that differ."""
