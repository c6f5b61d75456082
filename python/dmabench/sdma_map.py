"""Writes an SDMA engine map for dmabench's hsa engine (`engines: "map:FILE"`) from the AMD kernel
driver's topology: for every GPU pair linked by xGMI, the lowest engine of the link's
recommended_sdma_engine_id_mask (/sys/class/kfd/kfd/topology/nodes/N/io_links/M/properties).

GPU ids are the order of the GPU nodes that this process can use (what HIP numbers them without
HIP_VISIBLE_DEVICES): like libhsakmt, which numbers only the nodes whose render node it can open (ROCm/ROCR-Runtime
libhsakmt/src/topology.c topology_sysfs_check_node_supported: hsakmt_open_drm_render_device(drm_render_minor);
ENOENT or EPERM leaves the node out), a GPU node whose --dri/renderD<drm_render_minor> cannot be opened (a
container that exposes some GPUs) gets no id and is said on stderr, so the ids after it follow the GPUs HIP sees.
Kernels that do not report recommended_sdma_engine_id_mask give no line for that pair; the script
says so on stderr and exits 1 when no pair has one.

usage: scripts/sdma_map.py [--root /sys/class/kfd/kfd/topology/nodes] [--dri /dev/dri] > my.map

Exit codes: 0 the map is written; 1 no AMD kernel driver (no --root directory) or no GPU pair with a recommended
engine (said on stderr); 2 bad input: a bad argument or a topology file that cannot be read (a FIFO, a device, too
large), one line `sdma_map.py: error: ...` on stderr.
"""
import os
import sys

from .files import read_bytes
from .text import ResultsError
from .tool import arg_parser, current_tool, run_tool

TOOL = "sdma_map.py"


def properties(path):
    """The `name value` lines of a topology properties file with an integer value; {} when there is none. A file
    that is not a regular file (checked before it is opened: a FIFO never blocks), over 1 MiB or unreadable is a
    ResultsError."""
    try:
        data = read_bytes(path, "topology properties file", 1 << 20)
    except FileNotFoundError:
        return {}
    out = {}
    for line in data.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit() and len(parts[1]) <= 20:
            out[parts[0]] = int(parts[1])
    return out


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        raise ResultsError(f"cannot read {path}: {e.strerror}") from None


def render_node_opens(dri, minor):
    """Whether this process can open <dri>/renderD<minor> read-write, as libhsakmt does before it numbers a GPU."""
    try:
        os.close(os.open(os.path.join(dri, f"renderD{minor}"), os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK))
        return True
    except OSError:
        return False


def visible_gpus(root, dri):
    """(the GPU nodes libhsakmt numbers, in order; the ones it skips with the reason)."""
    nodes = sorted(int(n) for n in listdir(root) if n.isdigit() and len(n) <= 9)
    gpus, hidden = [], []
    for n in nodes:
        p = properties(os.path.join(root, str(n), "properties"))
        if p.get("simd_count", 0) <= 0:
            continue
        minor = p.get("drm_render_minor")
        if minor is not None and not render_node_opens(dri, minor):
            hidden.append(f"node {n}: {os.path.join(dri, f'renderD{minor}')} cannot be opened here, so libhsakmt and HIP "
                          "skip this GPU; the GPU ids follow the ones that can")
            continue
        gpus.append(n)
    return gpus, hidden


def engine_map(root, dri="/dev/dri"):
    gpus, hidden = visible_gpus(root, dri)
    for why in hidden:
        print(f"{current_tool(TOOL)}: {why}", file=sys.stderr)
    ordinal = {node: i for i, node in enumerate(gpus)}
    lines, missing = [], []
    for node in gpus:
        links = os.path.join(root, str(node), "io_links")
        for link in listdir(links) if os.path.isdir(links) else []:
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


def run(argv=None):
    ap = arg_parser(__doc__)
    ap.add_argument("--root", default="/sys/class/kfd/kfd/topology/nodes")
    ap.add_argument("--dri", default="/dev/dri", help="where the GPUs' render nodes are (renderD<drm_render_minor>)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.root):
        print(f"{current_tool(TOOL)}: {args.root} does not exist (no AMD kernel driver here)", file=sys.stderr)
        return 1
    lines, missing = engine_map(args.root, args.dri)
    for s, d in missing:
        print(f"{current_tool(TOOL)}: GPU {s} -> GPU {d}: the driver reports no recommended_sdma_engine_id_mask", file=sys.stderr)
    if not lines:
        print(f"{current_tool(TOOL)}: no GPU pair has a recommended SDMA engine", file=sys.stderr)
        return 1
    print("# src,engine,dst from recommended_sdma_engine_id_mask (scripts/sdma_map.py)")
    print("\n".join(lines))
    return 0


def main(argv=None, tool=TOOL):
    return run_tool(tool, run, argv)


if __name__ == "__main__":
    sys.exit(main())
