"""acbench: the memcached-ac experiment harness (CLI `acbench`).

Modules: `core` (ctypes binding of libacopt), `traceio` (ACTRACE / oracleGeneral
files), `units` (parsing capacities and sizes), `opt` (OPT / LRU / PFOO-L
report), `opt_cmd` (the `acbench opt` command), `cli` (the typer app).
"""
__version__ = "0.1.0"
