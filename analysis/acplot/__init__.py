"""acplot: turns experiment results into the loss-vs-OPT table and figure.

    from acplot import loss_table, plot_loss_grid
    table = loss_table(results)                 # adds hit_rate and loss_pp
    plot_loss_grid(table, "out/fig3")           # writes out/fig3.png and out/fig3.pdf
"""
from acplot.loss import REQUIRED_COLUMNS, ResultsError, loss_table
from acplot.grid import MEM_RATIOS, plot_loss_grid

__all__ = ["REQUIRED_COLUMNS", "ResultsError", "loss_table", "MEM_RATIOS", "plot_loss_grid"]
