"""The reports of dmabench results, one module each (`dmabench-results report KIND`): blocks, crossover (a
sub-package: read, fits, decisions, md, plots, cli), moe, overlap, setup, dma_latte, host_reference, matrix."""
