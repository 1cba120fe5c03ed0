"""`gpu-infra catalog`: the table, recommendations, bad input."""

from __future__ import annotations

from gpu_infra_tools.cli import main


def test_table_lists_types_with_unknown_prices_and_unconfirmed_marks(capsys):
    assert main(["catalog", "--use", "training", "--gpu-memory", "96"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["TYPE", "GPU"]
    gn8v = next(line for line in lines if line.startswith("ecs.gn8v-8x.48xlarge"))
    assert "NVIDIA H20*" in gn8v and gn8v.endswith("unknown")
    assert not any(line.startswith("ecs.gn7e") for line in lines)
    assert "* marks UNCONFIRMED data" in out


def test_recommend_prints_ranked_choices_with_reasons(capsys):
    assert main(["catalog", "--recommend", "--layout", "training", "--gpu-memory", "80",
                 "--gpus", "16", "--multi-node", "--region", "cn-beijing", "--top", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1. ecs.ebmgn7ex.32xlarge x 2 (full fit)"
    assert "     - ~541.66 CNY/h (2024-12-31 PRICE)" in out
    assert not any(line.startswith("2. ") for line in out)


def test_bad_input_exits_2_with_one_line_per_problem(capsys):
    assert main(["catalog", "--recommend", "--region", "xx", "--gpus", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "--region: unknown region 'xx'", "--gpus: 0; at least 1",
        "--gpu-memory: required with --recommend"]


def test_nothing_fits_exits_2(capsys):
    assert main(["catalog", "--recommend", "--layout", "inference", "--gpu-memory", "500"]) == 2
    assert capsys.readouterr().err.startswith("no instance type fits: inference, 500 GiB")
