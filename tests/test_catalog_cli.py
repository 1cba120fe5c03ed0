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


def test_a_gpu_model_the_catalog_does_not_carry_exits_2_and_names_the_models(capsys):
    assert main(["catalog", "--gpu-model", "H100"]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith("--gpu-model: no GPU model in the catalog has the words 'H100'; "
                           "models: ")
    assert "NVIDIA H20" in line and "instance_types" in line
    assert captured.out == ""
    assert main(["catalog", "--gpu-model", "l20"]) == 0   # case-insensitive, as before
    assert "ecs.gn8is.2xlarge" in capsys.readouterr().out


def test_the_table_says_how_each_family_is_bought_and_why_regions_are_unknown(capsys):
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("ecs.")}
    assert "sales only" in rows["ecs.gn8is-8x.32xlarge"]
    assert "by ticket (old)" in rows["ecs.gn7s-c8g1.2xlarge"]
    assert "preview" in rows["ecs.ebmgn9gc.64xlarge"]
    assert " open " in rows["ecs.gn7i-c8g1.2xlarge"]
    assert "Regions: unknown for every type: no dated source lists the regions" in out


def test_recommendations_name_purchase_limits_and_rank_previews_lower(capsys):
    assert main(["catalog", "--recommend", "--layout", "inference", "--gpu-memory", "70",
                 "--gpus", "8", "--top", "30"]) == 0
    out = capsys.readouterr().out
    assert "- in invitational preview: apply by ticket" in out
    assert "- sold through Alibaba Cloud sales, in specific regions only" in out
    ranked = [line for line in out.splitlines() if line[:1].isdigit()]
    assert "ecs.gn8v-8x.16xlarge x 1 (full fit)" in ranked[1]
    assert ranked[3].endswith("ecs.ebmgn9gc.64xlarge x 1 (fit penalty 1)")
