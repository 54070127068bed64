"""Speed: TTFT, TPOT and throughput for the planner's inputs (app.core.perf), as a section and as JSON.

Its own feature rather than part of the planner: its own URLs (/speed, /api/performance), template
(speed.html) and view model; like the recommendation it only reads the planner's inputs.
"""
