"""Record sets by device (issue 55): a GPU build reads its own records of the
configurations re-run per device, and the CPU records of the larger studies; running a
study on the wrong device is refused with the reason."""

from __future__ import annotations

import pytest

from bookbuild.runs import registry as experiments
from bookbuild.runs import sweeps
from chapter_code.core import numerics


@pytest.fixture
def gpu_profile(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(numerics, "output_profile", lambda device: "cuda-sm90")
    return "cuda-sm90"


def test_per_device_configurations_are_the_chapters_runs_and_the_smoke_checks() -> None:
    assert experiments.PER_DEVICE_CONFIGS == (
        "book-runs",
        "book-grid",
        "smoke",
        "word-lm-scale:cpu",
    )
    assert sweeps.per_device("book-runs")
    assert not sweeps.per_device("cpu")
    assert not sweeps.per_device("cpu", "scoreboard")
    # the scale study's three sizes, one sweep's config
    assert sweeps.per_device("cpu", "word-lm-scale")
    assert not sweeps.per_device("full-size")


def test_a_gpu_reads_its_own_set_of_a_per_device_configuration(
    gpu_profile: str,
) -> None:
    sweep = experiments.MEMORY_ROBUSTNESS
    assert sweeps.record_profile(sweep, "book-grid", "cuda") == gpu_profile
    assert sweeps.record_profile(sweep, "book-grid", "cuda:0") == gpu_profile
    assert sweeps.record_profile(sweep, "book-grid", "cpu") is None  # the CPU set
    assert sweeps.record_profile(sweep, "book-grid", None) is None
    # a study both editions read from the CPU
    assert sweeps.record_profile(sweep, "cpu", "cuda") is None
    assert (
        sweeps.record_profile(experiments.WORD_LM_SCALE, "cpu", "cuda") == gpu_profile
    )
    gpu = experiments.WORD_LM_SCALE
    # asks for GPUs itself: one set
    assert sweeps.record_profile(gpu, "gpu", "cuda") is None
    root = sweeps.ROOT
    assert (
        sweeps.records_dir("x", "book-runs", root, gpu_profile)
        == root / "records/x/book-runs@cuda-sm90"
    )
    assert sweeps.records_dir("x", "book-runs", root) == root / "records/x/book-runs"


def test_a_gpu_build_without_its_records_names_them_and_the_command(
    gpu_profile: str,
) -> None:
    with pytest.raises(sweeps.SweepNotReady) as info:
        sweeps.load("gated-book-runs", "book-runs", device="cuda")
    text = str(info.value)
    assert "(config book-runs@cuda-sm90) has no records yet" in text
    assert "make experiments SWEEP=gated-book-runs CONFIG=book-runs DEVICE=cuda" in text
    assert "--device cuda" in text
    # the CPU build reads the committed CPU records of the same configuration
    assert (
        sweeps.load("gated-book-runs", "book-runs", device="cpu").config == "book-runs"
    )


def test_a_study_read_from_its_cpu_records_is_not_re_run_on_a_gpu() -> None:
    with pytest.raises(
        sweeps.UserError,
        match=r"config 'cpu' is read from its CPU records by both editions; "
        r"--device cuda re-runs only book-runs, book-grid, smoke, "
        r"word-lm-scale:cpu",
    ):
        sweeps.run(experiments.SCOREBOARD, "cpu", device="cuda")
    with pytest.raises(
        sweeps.UserError, match=r"config 'gpu' asks for GPUs; drop --device cpu"
    ):
        sweeps.run(experiments.WORD_LM_SCALE, "gpu", device="cpu")
    with pytest.raises(
        sweeps.UserError, match=r"--device must be cpu or cuda; got 'tpu'"
    ):
        sweeps.run(experiments.SCOREBOARD, "cpu", device="tpu")


def test_a_page_reads_either_edition_of_a_per_device_configuration() -> None:
    assert (
        sweeps.load("gated-book-runs", "book-runs", edition="gpu", none_if_unrun=True)
        is None
    )  # none made yet
    with pytest.raises(
        sweeps.SweepNotReady,
        match=r"has no GPU records yet.\nMake them on a GPU with: make "
        r"experiments SWEEP=gated-book-runs CONFIG=book-runs DEVICE=cuda",
    ):
        sweeps.load("gated-book-runs", "book-runs", edition="gpu")
    assert (
        sweeps.load("gated-book-runs", "book-runs", edition="cpu").config == "book-runs"
    )
    with pytest.raises(
        ValueError, match=r"config 'cpu' is not re-run per device: it has one edition"
    ):
        sweeps.load("scoreboard", "cpu", edition="gpu")
    with pytest.raises(ValueError, match=r"edition must be 'cpu' or 'gpu'; got 'tpu'"):
        sweeps.load("gated-book-runs", "book-runs", edition="tpu")


def test_the_gpu_sets_present_are_found(tmp_path) -> None:
    for name in (
        "book-runs@cuda-sm90",
        "book-runs@cuda-sm80",
        "book-runs",
        "cpu@cuda-sm90",
    ):
        (tmp_path / "records" / "s" / name).mkdir(parents=True)
    assert sweeps.gpu_record_profiles("s", "book-runs", tmp_path) == [
        "cuda-sm80",
        "cuda-sm90",
    ]
    assert sweeps.gpu_record_profiles("s", "smoke", tmp_path) == []
