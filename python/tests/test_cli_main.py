"""`haslab run` without typer (haslab.cli_main): a valid run command line is parsed by
haslab.cli_run.parse_run_args and run without importing typer, pydantic, rich (with -q), NumPy,
pandas or pyarrow; it writes and prints what the typer command writes and prints; everything
else (help, usage errors, the other commands) goes to the typer app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from haslab import cli_run
from haslab.cli import app
from haslab.cli_run import RUN_DEFAULTS, RUN_OPTIONS, parse_run_args

from conftest import cli, demo_toml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]

#: What `haslab run` must not import (rich only when it prints).
HEAVY = ("typer", "click", "pydantic", "numpy", "pandas", "pyarrow", "matplotlib")


def typer_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """The same command line given to the typer app itself (the path before the lean one)."""
    code = "from haslab.cli import app; app(prog_name='haslab')"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def imported(stderr: str) -> set[str]:
    """Top-level packages named by `python -X importtime`'s report."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@pytest.fixture
def scenario(tmp_path) -> Path:
    path = tmp_path / "bulk.toml"
    path.write_text(demo_toml("2s"))
    return path


# ---------------------------------------------------------------------------------------------
# what the process imports


@pytest.mark.parametrize("extra", [[], ["--set", "duration=1s", "-f"]])
def test_python_m_haslab_run_quiet_imports_neither_typer_pydantic_rich_numpy_pandas_nor_pyarrow(
    tmp_path, scenario, extra
):
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "haslab", "run", str(scenario), "-o", str(out),
                        "-q", *extra], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    names = imported(p.stderr)
    assert "haslab" in names  # the report was read
    assert not names & {*HEAVY, "rich"}, sorted(names & {*HEAVY, "rich"})
    assert (out / "summary.json").is_file() and (out / "goodput.parquet").is_file()


def test_the_console_script_function_runs_without_typer(tmp_path, scenario):
    # what [project.scripts] haslab calls, checked in the process's sys.modules at its end
    out = tmp_path / "out"
    code = (
        "import sys\n"
        "from haslab.cli_main import main\n"
        f"sys.argv = ['haslab', 'run', {str(scenario)!r}, '--out', {str(out)!r}, '-q']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        f"heavy = sorted(m for m in {(*HEAVY, 'rich')!r} if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "0 []"
    assert (out / "summary.json").is_file()


def test_the_console_script_is_the_lean_entry_point():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["haslab"] == "haslab.cli_main:main"
    main_py = (REPO / "python" / "haslab" / "__main__.py").read_text()
    assert "from .cli_main import main" in main_py


def test_a_printing_run_loads_rich_but_not_typer(tmp_path, scenario):
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "haslab", "run", str(scenario), "-o",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    names = imported(p.stderr)
    assert "rich" in names
    assert not names & set(HEAVY), sorted(names & set(HEAVY))
    assert "Flows" in p.stdout


# ---------------------------------------------------------------------------------------------
# the same results and output as the typer command


@pytest.mark.parametrize("extra", [["-q"], [], ["--set", "duration=1500ms", "-s", "flow[0].tcp.sack=true"],
                                   ["--no-pcap", "--quiet"]])
def test_the_lean_and_the_typer_run_write_and_print_the_same(tmp_path, scenario, extra):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pa = cli("run", scenario, "-o", "out", *extra, cwd=a)
    pb = typer_cli("run", scenario, "-o", "out", *extra, cwd=b)
    assert pa.returncode == pb.returncode == 0, (pa.stderr, pb.stderr)
    assert pa.stdout == pb.stdout
    assert pa.stderr == pb.stderr
    files = sorted(p.name for p in (a / "out").iterdir())
    assert files == sorted(p.name for p in (b / "out").iterdir())
    assert "summary.json" in files and ".haslab-run" in files
    for name in files:
        assert (a / "out" / name).read_bytes() == (b / "out" / name).read_bytes(), name
    if "--set" in extra:
        assert '"overrides"' in (a / "out" / "summary.json").read_text()


def test_force_on_a_used_directory_says_what_it_removed_as_typer_does(tmp_path, scenario):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, run in ((a, cli), (b, typer_cli)):
        d.mkdir()
        assert run("run", scenario, "-o", "out", "-q", cwd=d).returncode == 0
    pa = cli("run", scenario, "-o", "out", "-f", cwd=a)
    pb = typer_cli("run", scenario, "-o", "out", "-f", cwd=b)
    assert pa.returncode == pb.returncode == 0
    assert "--force: removed 4 file(s) of the previous run in out/" in pa.stderr
    assert (pa.stdout, pa.stderr) == (pb.stdout, pb.stderr)


# ---------------------------------------------------------------------------------------------
# one set of options: the lean parser and the typer command agree


def _typer_run_params() -> list:
    """The typer command's parameters, the help option (from the app's settings) included."""
    group = typer.main.get_command(app)
    cmd = group.commands["run"]
    parent = group.make_context("haslab", ["run"], resilient_parsing=True)
    return cmd.get_params(cmd.make_context("run", [], parent=parent, resilient_parsing=True))


def test_the_lean_parser_and_the_typer_command_have_the_same_options():
    params = _typer_run_params()
    options = [p for p in params if p.param_type_name == "option" and p.name != "help"]
    declared = {}
    for o in options:
        for s in o.opts:
            declared[s] = (o.name, "append" if o.multiple else ("value" if not o.is_flag else True))
        for s in o.secondary_opts:
            declared[s] = (o.name, False)
    assert declared == RUN_OPTIONS
    for o in options:
        if o.name in RUN_DEFAULTS:
            assert str(o.default) == str(RUN_DEFAULTS[o.name]), o.name
        else:
            assert o.multiple and not o.default, o.name
    arguments = [p.name for p in params if p.param_type_name == "argument"]
    assert arguments == ["scenario"]
    # help is typer's: the lean parser hands it over
    help_options = {s for p in params if p.name == "help" for s in p.opts}
    assert help_options == {"-h", "--help"} and not help_options & set(RUN_OPTIONS)


VALID = [
    ["s.toml"],
    ["s.toml", "-o", "d"],
    ["-o", "d", "s.toml"],
    ["s.toml", "--out=d"],
    ["s.toml", "--out", "d/"],
    ["s.toml", "-od"],
    ["s.toml", "-o=d"],
    ["-qf", "s.toml"],
    ["-qfo", "d", "s.toml"],
    ["-fqod", "s.toml"],
    ["s.toml", "--no-pcap"],
    ["s.toml", "--no-pcap", "--pcap", "--force", "--quiet"],
    ["s.toml", "-s", "a=1", "--set", "b=2", "--set=c=3", "-sd=4", "-qs", "e=5"],
    ["s.toml", "-o", "a", "-o", "b"],
    ["s.toml", "-o", "-q"],
    ["s.toml", "--out", "--quiet"],
    ["s.toml", "--set", "--force"],
    ["--", "-s.toml"],
    ["-o", "d", "--", "s.toml"],
    ["-q", "--", "--out"],
    ["-"],
    ["dir/s.toml", "-q", "-q"],
]

FALL_BACK = [
    [],
    ["a.toml", "b.toml"],
    ["--bogus", "s.toml"],
    ["s.toml", "-x"],
    ["s.toml", "-qx"],
    ["s.toml", "-o"],
    ["s.toml", "--set"],
    ["s.toml", "-qfo"],
    ["s.toml", "--pcap=1"],
    ["s.toml", "--quiet="],
    ["s.toml", "-q=1"],
    ["s.toml", "--qu"],
    ["s.toml", "---out", "d"],
    ["s.toml", "-h"],
    ["s.toml", "-qh"],
    ["--help"],
    ["--version", "s.toml"],
    ["--", "a", "b"],
]


@pytest.mark.parametrize("args", VALID, ids=" ".join)
def test_the_lean_parser_parses_a_valid_command_line_as_typer_does(monkeypatch, args):
    seen = []
    monkeypatch.setattr(cli_run, "execute_run", lambda **kw: seen.append(kw))
    r = CliRunner().invoke(app, ["run", *args])
    assert r.exit_code == 0, r.output
    assert seen == [parse_run_args(args)]
    assert all(isinstance(seen[0][k], Path) for k in ("scenario", "out_dir"))


@pytest.mark.parametrize("args", FALL_BACK, ids=" ".join)
def test_the_lean_parser_hands_over_what_typer_refuses_or_helps_with(monkeypatch, args):
    assert parse_run_args(args) is None
    monkeypatch.setattr(cli_run, "execute_run", lambda **kw: pytest.fail("ran"))
    r = CliRunner().invoke(app, ["run", *args])
    assert r.exit_code == 2 or (r.exit_code == 0 and "Usage:" in r.output), (r.exit_code, r.output)


# ---------------------------------------------------------------------------------------------
# errors: the lean path's messages and exit codes are the typer command's


def _same_as_typer(tmp_path, *args) -> subprocess.CompletedProcess:
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    p = cli("run", *args, cwd=tmp_path / "a")
    q = typer_cli("run", *args, cwd=tmp_path / "b")
    assert (p.returncode, p.stdout, p.stderr) == (q.returncode, q.stdout, q.stderr)
    assert "Traceback" not in p.stderr
    return p


def test_unknown_option(tmp_path, scenario):
    p = _same_as_typer(tmp_path, scenario, "--bogus")
    assert p.returncode == 2
    assert "No such option: --bogus" in p.stderr


def test_option_without_its_value(tmp_path, scenario):
    p = _same_as_typer(tmp_path, scenario, "-q", "--out")
    assert p.returncode == 2
    assert "Option '--out' requires an argument." in p.stderr


def test_missing_scenario_file(tmp_path):
    missing = tmp_path / "nope.toml"
    p = _same_as_typer(tmp_path, missing, "-q")
    assert p.returncode == 1
    assert p.stderr == f"error: scenario file not found: {missing}\n"
    # reported by the lean path itself
    q = subprocess.run([sys.executable, "-X", "importtime", "-m", "haslab", "run", str(missing)],
                       capture_output=True, text=True, timeout=600)
    assert q.returncode == 1 and "typer" not in imported(q.stderr)


def test_bad_set_item(tmp_path, scenario):
    p = _same_as_typer(tmp_path, scenario, "--set", "duration")
    assert p.returncode == 1
    assert "--set 'duration': expected KEY=VALUE" in p.stderr


def test_bad_value_names_the_field(tmp_path, scenario):
    p = _same_as_typer(tmp_path, scenario, "-q", "--set", "dumbbell.bottleneck_rate=fast")
    assert p.returncode == 1
    assert f"{scenario} (with --set dumbbell.bottleneck_rate=fast): " in p.stderr
    assert "bottleneck_rate" in p.stderr.split(": ", 1)[1]


def test_bad_scenario_file_names_the_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(demo_toml("2s").replace('bottleneck_rate = "8Mbps"', 'bottleneck_rate = "eight"'))
    p = _same_as_typer(tmp_path, bad, "-q")
    assert p.returncode == 1
    assert str(bad) in p.stderr and "bottleneck_rate" in p.stderr


def test_a_used_out_dir_is_refused(tmp_path, scenario):
    for d in ("a", "b"):
        (tmp_path / d / "out").mkdir(parents=True)
        (tmp_path / d / "out" / "notes.txt").write_text("mine")
    p = _same_as_typer(tmp_path, scenario, "-o", "out", "-q")
    assert p.returncode == 1
    assert "--out out/ is not empty (notes.txt)" in p.stderr


def test_run_help_is_typers(tmp_path):
    p = _same_as_typer(tmp_path, "--help")
    assert p.returncode == 0 and "Usage: haslab run" in p.stdout and "--no-pcap" in p.stdout
