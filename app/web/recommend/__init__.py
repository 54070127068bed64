"""The recommendation: the remedy walk (app.core.recommend) for the planner's inputs, as a section and as JSON."""
