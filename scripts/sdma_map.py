#!/usr/bin/env python3
"""Writes an SDMA engine map for dmabench's hsa engine (`engines: "map:FILE"`) from the AMD kernel
driver's topology: for every GPU pair linked by xGMI, the lowest engine of the link's
recommended_sdma_engine_id_mask (/sys/class/kfd/kfd/topology/nodes/N/io_links/M/properties).

GPU ids are the order of the GPU nodes (what HIP numbers them without HIP_VISIBLE_DEVICES).
Kernels that do not report recommended_sdma_engine_id_mask give no line for that pair; the script
says so on stderr and exits 1 when no pair has one.

usage: scripts/sdma_map.py [--root /sys/class/kfd/kfd/topology/nodes] > my.map
"""
import argparse
import os
import sys


def properties(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                    out[parts[0]] = int(parts[1])
    except OSError:
        pass
    return out


def engine_map(root):
    nodes = sorted((int(n) for n in os.listdir(root) if n.isdigit()))
    gpus = [n for n in nodes if properties(os.path.join(root, str(n), "properties")).get("simd_count", 0) > 0]
    ordinal = {node: i for i, node in enumerate(gpus)}
    lines, missing = [], []
    for node in gpus:
        links = os.path.join(root, str(node), "io_links")
        for link in sorted(os.listdir(links)) if os.path.isdir(links) else []:
            p = properties(os.path.join(links, link, "properties"))
            dst = p.get("node_to")
            if dst not in ordinal or dst == node:
                continue
            mask = p.get("recommended_sdma_engine_id_mask", 0)
            if mask <= 0:
                missing.append((ordinal[node], ordinal[dst]))
                continue
            engine = (mask & -mask).bit_length() - 1
            lines.append(f"{ordinal[node]},{engine},{ordinal[dst]}")
    return lines, missing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default="/sys/class/kfd/kfd/topology/nodes")
    args = ap.parse_args()
    if not os.path.isdir(args.root):
        print(f"sdma_map: {args.root} does not exist (no AMD kernel driver here)", file=sys.stderr)
        return 1
    lines, missing = engine_map(args.root)
    for s, d in missing:
        print(f"sdma_map: GPU {s} -> GPU {d}: the driver reports no recommended_sdma_engine_id_mask", file=sys.stderr)
    if not lines:
        print("sdma_map: no GPU pair has a recommended SDMA engine", file=sys.stderr)
        return 1
    print("# src,engine,dst from recommended_sdma_engine_id_mask (scripts/sdma_map.py)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
