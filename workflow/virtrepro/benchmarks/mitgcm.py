"""MIT GCM ``verification/exp2`` (Youseff 2006, Section 5.2 and Fig. 3b): the sequential model of the
planetary ocean circulation at 4 degrees, 20 layers, run for the simulated period the scale sets.

The model is built on the testbed host from a local tarball of the public repository
(:mod:`virtrepro.builds.mitgcm`); its executable, exp2's input fields and a namelist ``data`` that sets the
number of time steps are uploaded into the run's scratch directory of every instance, as NPB's
binaries are. The run is timed by ``/usr/bin/time -p`` (real, user and system time, as the paper's
``time``) and lists the files it wrote (the paper's I/O volume); the parser
(:func:`virtrepro.parsers.parse_mitgcm`) refuses a run that failed, stopped early or diverged.
"""

from __future__ import annotations

from ..parsers.mitgcm import FILES_END, FILES_MARKER, parse_mitgcm
from .base import BUILT, SCRATCH, Benchmark, Preparation, Variant

# exp2's time step of the tracers and of the model's clock (deltaTtracer, deltaTClock in
# verification/exp2/input/data; the build checks the tree still says so): 1.25 days
TIME_STEP_S = 108000
# exp2's input fields and namelists besides ``data`` (which the build writes per number of time steps)
INPUTS = ("data.pkg", "eedata", "SSS.bin", "SST.bin", "salt.bin", "theta.bin", "topog.bin", "windx.bin", "windy.bin")
EXECUTABLE = "mitgcmuv"
RUN_DIR = f"{SCRATCH}/exp2"


def time_steps(days: int) -> int:
    """The number of exp2 time steps that make ``days`` simulated days (a multiple of 5 days: 4 steps)."""
    steps, rest = divmod(int(days) * 86400, TIME_STEP_S)
    if rest:
        raise ValueError(f"mit_gcm: {days} simulated days are no whole number of exp2's {TIME_STEP_S} s time steps "
                         "(give a multiple of 5 days)")
    return steps


def namelist_name(steps: int) -> str:
    """The built namelist ``data`` for ``steps`` time steps (``@BUILT@/exp2/<name>``)."""
    return f"data.steps-{steps}"


class MitGcm(Benchmark):
    """MITgcm exp2, sequential, one run per simulated period."""

    name = "mit_gcm"
    tool = "mitgcm"
    build = "mitgcm"  # virtrepro.builds.registry: obtained and built by virtrepro.builds.mitgcm
    packages = ("libgfortran5", "time")
    programs = ("/usr/lib/x86_64-linux-gnu/libgfortran.so.5", "/usr/bin/time")
    version_command = "echo MITgcm exp2"
    scratch = "instance"
    parameters = """
        required: [days]
        properties:
          days: {type: integer, minimum: 5, multipleOf: 5, description: "simulated days (exp2's time step is 1.25 days)"}
    """
    metric_declaration = ("hpc", """
        time              s      lower
        user_time         s      lower
        sys_time          s      lower
        sys_share         1      none
        model_wall_time   s      lower
        model_user_time   s      lower
        model_sys_time    s      lower
        output_bytes      bytes  none   disk
        output_files      files  none   disk
    """)

    def variants(self, params: dict, platform: str | None = None) -> list[Variant]:
        time_steps(params["days"])  # refused now, not when a run asks
        return [self._variant(days=int(params["days"]))]

    def prepare(self, variant: Variant, config: dict | None = None) -> Preparation:
        """The executable, exp2's input and the namelist of the variant's time steps, built on the
        controller (virtrepro.builds.mitgcm's build: ``@BUILT@/exp2/...``)."""
        steps = time_steps(variant.param_dict["days"])
        files = [(f"{BUILT}/exp2/{EXECUTABLE}", f"{RUN_DIR}/{EXECUTABLE}"),
                 (f"{BUILT}/exp2/{namelist_name(steps)}", f"{RUN_DIR}/data")]
        return Preparation(uploads=tuple(files + [(f"{BUILT}/exp2/input/{name}", f"{RUN_DIR}/{name}") for name in INPUTS]))

    def run(self, variant: Variant) -> str:
        # the files the model writes are those newer than the marker made just before it starts
        return (f"cd {RUN_DIR} && touch .virtrepro-start && /usr/bin/time -p ./{EXECUTABLE}; status=$?; "
                f"echo '{FILES_MARKER}'; find . -type f -newer .virtrepro-start -printf '%s %P\\n' | sort -k 2; "
                f"echo '{FILES_END}'; exit $status")

    def parse(self, text: str, source: str, params: dict | None = None) -> list[dict]:
        return parse_mitgcm(text, source, time_steps=time_steps(params["days"]) if params else None)
