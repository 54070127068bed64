"""Translation catalogs (package data; located by app/resources.py)."""
