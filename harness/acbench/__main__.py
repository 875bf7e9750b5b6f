from acbench.cli import run

if __name__ == "__main__":   # not when a Dask worker process (spawned) imports it again
    run()
