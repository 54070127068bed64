"""The doctor: a pasted vLLM start-up log (and metrics) diagnosed by the core (app.core.diagnose)."""
