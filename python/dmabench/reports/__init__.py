"""The reports of dmabench results, one module each (`dmabench-results report KIND`): blocks, crossover, moe,
overlap, setup, dma_latte, host_reference, matrix."""
