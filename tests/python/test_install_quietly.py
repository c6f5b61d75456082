"""scripts/common.sh's install_quietly (issue 52): apt's postinst scripts start and enable the daemons they install
(munge, slurmctld, slurmd); the test command must leave none enabled or running that the user did not have. Checked
in isolation: a fake installer that enables and starts units, a fake systemctl and sudo on PATH, the policy-rc.d in a
temporary directory; apt itself never runs."""
import os
import subprocess

from test_scripts import ROOT

FAKE_SYSTEMCTL = r"""#!/bin/bash
# a systemd of two files: enabled and running units, one a line; every call logged
echo "$*" >> "$STATE/calls"
[ -n "$BROKEN" ] && exit 1  # a systemd that cannot answer (a container)
case "$1" in
  list-unit-files) sed 's/$/ enabled enabled/' "$STATE/enabled" ;;
  list-units) sed 's/$/ loaded active running x/' "$STATE/running" ;;
  disable) grep -vx "$2" "$STATE/enabled" > "$STATE/e" || true; mv "$STATE/e" "$STATE/enabled" ;;
  stop) grep -vx "$2" "$STATE/running" > "$STATE/r" || true; mv "$STATE/r" "$STATE/running" ;;
esac
"""
# what a postinst does: asks the policy whether it may start (deb-systemd-invoke), enables and starts anyway here so
# that the undoing is tested too
FAKE_INSTALL = r"""#!/bin/bash
if [ -x "$POLICY_RC_D" ]; then "$POLICY_RC_D" munge.service start; echo "policy $?" >> "$STATE/install"; fi
printf 'slurmd.service\nmunge.service\n' >> "$STATE/enabled"
printf 'slurmd.service\nmunge.service\n' >> "$STATE/running"
exit "${INSTALL_RC:-0}"
"""


def write(path, text, mode=0o755):
    path.write_text(text)
    path.chmod(mode)


def fake_machine(tmp_path, enabled, running):
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    write(bin_dir / "systemctl", FAKE_SYSTEMCTL)
    write(bin_dir / "sudo", '#!/bin/sh\nexec "$@"\n')
    write(bin_dir / "fake-install", FAKE_INSTALL)
    (state / "enabled").write_text("".join(f"{u}\n" for u in enabled))
    (state / "running").write_text("".join(f"{u}\n" for u in running))
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", STATE=str(state),
               POLICY_RC_D=str(tmp_path / "policy-rc.d"))
    return state, env


def install(env, rc=0):
    # as scripts/test.sh runs it: set -euo pipefail, a plain call (as ensure_packages makes for the packages the build
    # needs), so that a failing probe inside would end the script
    script = f'set -euo pipefail; source "{ROOT}/scripts/common.sh"; install_quietly fake-install; echo "rc 0"'
    return subprocess.run(["bash", "-c", script], env=dict(env, INSTALL_RC=str(rc)), capture_output=True, text=True)


def lines(path):
    return sorted(set(path.read_text().split()))  # a unit enabled twice is enabled once


def test_an_install_leaves_no_new_service_enabled_or_running(tmp_path):
    # the user had ssh enabled and running, munge enabled but stopped
    state, env = fake_machine(tmp_path, ["munge.service", "ssh.service"], ["ssh.service"])
    p = install(env)
    assert p.returncode == 0 and "rc 0" in p.stdout, p.stderr
    assert (state / "install").read_text() == "policy 101\n"  # no start allowed during the install
    assert not os.path.exists(env["POLICY_RC_D"])  # our policy goes with the install
    assert lines(state / "enabled") == ["munge.service", "ssh.service"]  # the user's munge stays enabled
    assert lines(state / "running") == ["ssh.service"]
    calls = (state / "calls").read_text()
    assert "disable slurmd.service" in calls and "disable munge" not in calls and "ssh" not in calls.replace(
        "list", ""), calls
    assert "disabling slurmd.service (the install enabled it at boot; it was not before)" in p.stderr


def test_the_machines_own_policy_stays_and_a_failed_install_says_so(tmp_path):
    state, env = fake_machine(tmp_path, [], [])
    own = "#!/bin/sh\nexit 0\n"
    write(tmp_path / "policy-rc.d", own)
    p = install(env, rc=100)
    assert p.returncode == 100 and "rc 0" not in p.stdout, p.stdout + p.stderr  # apt's failure reaches the caller
    assert (tmp_path / "policy-rc.d").read_text() == own
    assert (state / "install").read_text() == "policy 0\n"
    assert lines(state / "enabled") == [] and lines(state / "running") == []


def test_a_systemctl_that_cannot_answer_does_not_stop_the_install(tmp_path):
    state, env = fake_machine(tmp_path, [], [])
    p = install(dict(env, BROKEN="1"))
    assert p.returncode == 0 and "rc 0" in p.stdout, p.stdout + p.stderr
    assert (state / "install").read_text() == "policy 101\n" and not os.path.exists(env["POLICY_RC_D"])
