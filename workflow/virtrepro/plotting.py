"""Figure styling shared by every notebook: one colour per platform, PNG + PDF output."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

# One colour per platform, the same in every figure of every paper.
PLATFORM_COLORS = {
    "native": "#222222",
    "lxc": "#1b9e77",
    "podman": "#66a61e",
    "qemu-kvm": "#7570b3",
    "qemu-tcg": "#d95f02",
}

# How the papers' platforms map to the ones measured here.
PAPER_PLATFORMS = {
    "native / base system": "native",
    "OpenVZ, LXC (OS-level)": "lxc, podman",
    "VMware Server (software full virtualization)": "qemu-tcg",
    "KVM (hardware-assisted full virtualization)": "qemu-kvm",
    "Xen, Palacios": "not available here",
    "Amazon EC2": "a remote SSH testbed",
}


def style() -> None:
    sns.set_theme(context="notebook", style="whitegrid")
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "savefig.bbox": "tight"})


def platform_palette(platforms) -> dict:
    return {p: PLATFORM_COLORS.get(p, "#999999") for p in platforms}


def unavailable(ax, reason: str) -> None:
    """An empty panel that says in one line why the figure cannot be drawn (no data, no such platform...)."""
    ax.text(0.5, 0.5, reason, ha="center", va="center", wrap=True)
    ax.set_axis_off()


def save(fig, figures_dir: str | Path, paper: str, name: str) -> list[Path]:
    """Save ``fig`` as figures/<paper>/<name>.png and .pdf; return the paths."""
    out = Path(figures_dir) / paper
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    for path in paths:
        # fixed metadata so that reruns on the same data give the same files
        fig.savefig(path, metadata={"CreationDate": None} if path.suffix == ".pdf" else {"Software": None})
    return paths
