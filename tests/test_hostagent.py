"""The host agent as a remote host runs it: from the uploaded archive, with the standard library only.

(The whole path over SSH, with real guests, is in test_remote_testbed.py.)
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile

from virtrepro.testbed.hostagent import RESULT_MARKER
from virtrepro.testbed.agent import package_archive


def unpack(tmp_path):
    digest, data = package_archive()
    target = tmp_path / "agent" / digest
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target)
    return target


def agent(tmp_path, *args: str) -> tuple[int, dict | None, str]:
    """Run the agent as the controller does on a host (python3 -S: no site-packages), return its answer."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(unpack(tmp_path)), "VIRTREPRO_STATE": str(tmp_path / "state")}
    result = subprocess.run([sys.executable, "-S", "-m", "virtrepro.testbed.hostagent", *args], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=60)
    answers = [json.loads(line[len(RESULT_MARKER):]) for line in result.stderr.splitlines() if line.startswith(RESULT_MARKER)]
    return result.returncode, (answers[-1] if answers else None), result.stdout


def test_the_archive_is_the_package_and_its_hash_follows_its_content():
    digest, data = package_archive()
    names = tarfile.open(fileobj=io.BytesIO(data)).getnames()
    assert {"virtrepro/testbed/hostagent.py", "virtrepro/testbed/supervisor.py", "virtrepro/guests/image.py",
            "virtrepro/platforms/lxc.py"} <= set(names)
    assert not any("__pycache__" in name for name in names)
    assert package_archive() == (digest, data) and len(digest) == 16


def test_the_agent_needs_only_the_standard_library(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(unpack(tmp_path))}
    code = ("import sys, virtrepro.testbed.hostagent, virtrepro.platforms, virtrepro.guests.image, virtrepro.testbed.supervisor; "
            "from virtrepro.platforms.qemu import probe_kvm; "
            "print(sorted(m for m in ('fabric', 'paramiko', 'invoke', 'yaml') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    failed = subprocess.run([sys.executable, "-S", "-c", "import paramiko"], capture_output=True, env=env, cwd=tmp_path)
    assert failed.returncode != 0  # really without site-packages


def test_the_agent_answers_on_one_line_and_reports_errors(tmp_path):
    status, answer, stdout = agent(tmp_path, "status", json.dumps({"testbed": "t"}))
    assert status == 0 and answer["guests"] == [] and answer["state_dir"] == str(tmp_path / "state")
    assert stdout == ""  # standard output is kept for streams (lifecycle log, keeper handshake)
    status, answer, _ = agent(tmp_path, "start", json.dumps({"testbed": "t", "platform": "xen", "owner": 1, "index": 0}))
    assert status == 2 and answer["kind"] == "PlatformError" and "unknown platform 'xen'" in answer["error"]
    status, answer, _ = agent(tmp_path, "frobnicate", "{}")
    assert status == 2 and "unknown command" in answer["error"]


def test_an_unprivileged_user_prepares_a_host_that_has_everything_and_is_told_what_needs_root(tmp_path):
    """A cluster user without root: preparing for the unprivileged container works when the node has
    its tools and the image; what needs root (a missing image to build) is named."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    import pytest

    from virtrepro.guests.image import recipe_hash

    if shutil.which("ch-run") is None or shutil.which("setpriv") is None:
        pytest.skip("needs ch-run (charliecloud-runtime) and setpriv")
    work = Path(tempfile.mkdtemp(prefix="vr-agent-", dir="/var/tmp"))  # nobody must reach it: not under /tmp/pytest-of-root
    try:
        os.chmod(work, 0o755)
        code = unpack(work)
        state = work / "state"
        image = state / "images" / recipe_hash()
        image.mkdir(parents=True)
        (image / "image.json").write_text(json.dumps({"recipe": recipe_hash()}))

        def as_nobody(platforms):
            env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(code), "VIRTREPRO_STATE": str(state)}
            result = subprocess.run(["setpriv", "--reuid=nobody", "--regid=65534", "--clear-groups", sys.executable, "-S",
                                     "-m", "virtrepro.testbed.hostagent", "prepare", json.dumps({"platforms": platforms})],
                                    capture_output=True, text=True, env=env, cwd="/", timeout=60)
            return json.loads([line for line in result.stderr.splitlines() if line.startswith(RESULT_MARKER)][-1]
                              [len(RESULT_MARKER):])

        answer = as_nobody(["charliecloud"])
        assert answer.get("error") is None and answer["image_built"] is False and answer["installed"] == []
        (image / "image.json").unlink()  # no image: building one needs root
        answer = as_nobody(["charliecloud"])
        assert answer["kind"] == "AgentError" and answer["error"].startswith("preparing this host needs root")
        assert f"the guest image {image}" in answer["error"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
