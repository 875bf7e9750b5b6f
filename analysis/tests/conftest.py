"""The tests work on the checkout that holds them (acbench's home: harness/acbench/paths.py),
wherever pytest was started."""
import os
from pathlib import Path

os.environ.setdefault("ACBENCH_HOME", str(Path(__file__).resolve().parents[2]))
