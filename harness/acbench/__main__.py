from acbench.cli import app

app()
