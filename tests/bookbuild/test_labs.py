"""The labs: one per chapter; every notebook runs in a Jupyter kernel in both editions;
the solution edition passes every checkpoint, the student edition fails each one with
its stub's message; each checkpoint catches the plausible wrong answers written for it,
and holds no answer a student could copy."""

from __future__ import annotations

import importlib
import io
import math
import re
import zipfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
import torch
from nbclient import NotebookClient
from torch import nn

from bookbuild import files
from bookbuild.tools import labs
from chapter_code.beyond.linear_scan import (
    InputGatedLSTM,
    _check_pairs,
    combine,
    loop_linear,
    scan_linear,
)
from chapter_code.lm.char_lm import CharLM, TrainConfig, random_windows  # noqa: F401 (the fit checkpoint reads CharLM and TrainConfig from the wrong fits' globals)
from chapter_code.lm.perplexity import lm_loss_and_ppl

LABS = labs.load_labs()
EXERCISES = {ex.checkpoint.__name__: ex for lab in LABS for ex in lab.exercises}
_SECTION = "# lab section: "


@pytest.fixture(autouse=True)
def one_thread():
    """The notebooks run on one thread (their first cell says so); so do their
    checkpoints here."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _expected(exercise: labs.Exercise) -> tuple:
    values = labs.expected_values(exercise)
    return () if values is None else (values,)


def check(checkpoint_name: str, fn) -> None:
    """Run the checkpoint named ``checkpoint_name`` on ``fn`` as the notebook does
    (expected values included)."""
    exercise = EXERCISES[checkpoint_name]
    exercise.checkpoint(fn, *_expected(exercise))


@pytest.fixture(scope="module")
def executed(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], list[str]]:
    """Every lab in both editions, run in one Jupyter kernel (reset between notebooks):
    checkpoint outputs by lab."""
    cells = []
    for lab in LABS:
        for edition in ("student", "solution"):
            cells.append(
                nbformat.v4.new_code_cell(f"%reset -f\n{_SECTION}{lab.slug} {edition}")
            )
            cells += [
                nbformat.v4.new_code_cell(c.source, metadata=dict(c.metadata))
                for c in labs.notebook(lab, edition).cells
                if c.cell_type == "code"
            ]
    nb = nbformat.v4.new_notebook(cells=cells)
    path = tmp_path_factory.mktemp("labs")
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path)}},
    ).execute()
    out: dict[tuple[str, ...], Any] = {}
    key = None
    for cell in nb.cells:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if cell.source.startswith("%reset"):
            slug, edition = cell.source.split(_SECTION)[1].split()
            key = (slug, edition)
            out[key], out[(*key, "parts")], out[(*key, "seconds")] = [], {}, 0.0
            continue
        out[(*key, "seconds")] += labs.cell_seconds(cell)
        if "run_checkpoint(checkpoint_" in cell.source:
            # no other error, no traceback
            assert all(o.ename == "CheckpointError" for o in errors), errors
            assert all(
                o.traceback == [f"CheckpointError: {o.evalue}"] for o in errors
            ), errors
            out[key].append(
                "".join(o.get("text", "") for o in cell.outputs)
                + "".join(o.evalue for o in errors)
            )
        # the prediction and the results: the student's functions at work
        elif "lab_part" in cell.metadata:
            out[(*key, "parts")][cell.metadata["lab_part"]] = "".join(
                o.get("text", "") for o in cell.outputs
            )
            if key[1] == "solution":
                assert not errors, cell.source[:200]
            # in the student edition they run on the stubs (Run All stops at the first
            # checkpoint before them)
        else:
            assert not errors, cell.source[:200]
    return out


@pytest.mark.xdist_group(
    "labs-executed"
)  # one worker: the labs run once in one kernel (about 15 s)
@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_solution_edition_passes_every_checkpoint(lab: labs.Lab, executed) -> None:
    printed = executed[(lab.slug, "solution")]
    assert len(printed) == len(lab.exercises)
    assert all(p.startswith("Checkpoint passed") for p in printed), printed
    nb = labs.notebook(lab, "solution")
    # nbgrader's markers kept
    assert sum(labs.BEGIN in c.source for c in nb.cells) == len(lab.exercises)


@pytest.mark.xdist_group(
    "labs-executed"
)  # one worker: the labs run once in one kernel (about 15 s)
@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_student_edition_fails_each_checkpoint_with_its_stub_message(
    lab: labs.Lab, executed
) -> None:
    printed = executed[(lab.slug, "student")]
    assert len(printed) == len(lab.exercises)
    for number, text in enumerate(printed, start=1):
        assert text.startswith("Checkpoint not passed yet. "), text
        assert "Traceback" not in text
        # its own stub, or the stub of an earlier exercise whose function it calls first
        # (top_k_probs calls temperature_probs before its own region)
        assert any(
            labs.stub_message(lab, k, lab.exercises[k - 1]) in text
            for k in range(1, number + 1)
        ), text
    assert labs.stub_message(lab, 1, lab.exercises[0]) in printed[0]


def test_there_is_one_lab_per_chapter_with_at_least_three_exercises() -> None:
    chapters = [
        "recurrence",
        "gradients",
        "gated",
        "language-models",
        "generating",
        "depth",
        "beyond",
    ]
    assert [lab.chapter for lab in LABS] == [f"book/{c}" for c in chapters]
    for lab in LABS:
        assert len(lab.exercises) >= 3, lab.slug
        assert Path(labs.ROOT / f"{lab.chapter}.md").is_file()
        page = (labs.ROOT / f"{lab.chapter}.md").read_text()
        for edition in ("student", "solution"):
            assert f"../_build/labs/{lab.slug}-{edition}.ipynb" in page
            assert f"../_build/labs/labs-{edition}.zip" in page


def _solution_lines(exercise: labs.Exercise) -> list[str]:
    """The code lines of the exercise's solution region (comments and short lines left
    out)."""
    source = labs.solution_source(exercise.target).splitlines()
    begin = next(i for i, line in enumerate(source) if line.strip() == labs.BEGIN)
    end = next(i for i, line in enumerate(source) if line.strip() == labs.END)
    lines = [line.split("  #")[0].strip() for line in source[begin + 1 : end]]
    return [
        line
        for line in lines
        if len(line) >= 12 and not line.startswith("#") and line != "return masked"
    ]


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_notebooks_stand_alone_and_their_checkpoints_and_first_hints_hold_no_answer(
    lab: labs.Lab,
) -> None:
    for edition in ("student", "solution"):
        nb = labs.notebook(lab, edition)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert "chapter_code" not in cell.source
                assert "bookbuild" not in cell.source
                assert not re.search(r"# \[\d+\]", cell.source), (
                    "numbered markers belong to the pages"
                )
        assert f"pip install {' '.join(lab.requirements)}" in nb.cells[0].source
    student = labs.notebook(lab, "student")
    text = nbformat.writes(student)
    assert "YOUR CODE HERE" in text
    assert labs.BEGIN not in text
    assert "def reference_" not in text  # only the references' numbers travel
    checks = [
        c.source
        for c in student.cells
        if c.cell_type == "code" and "run_checkpoint(checkpoint_" in c.source
    ]
    assert len(checks) == len(lab.exercises)
    for exercise, check_source in zip(lab.exercises, checks, strict=True):
        assert len(exercise.hints) >= 2, (
            f"{exercise.target}: a nudge, then the shape of the answer"
        )
        for line in _solution_lines(exercise):
            assert line not in check_source, (
                f"{exercise.target}: its checkpoint holds the answer line {line!r}"
            )
            assert line not in exercise.hints[0], (
                f"{exercise.target}: its first hint holds the answer line {line!r}"
            )
    hints = [
        c.source
        for c in student.cells
        if c.cell_type == "markdown" and "<details>" in c.source
    ]
    for exercise, block in zip(lab.exercises, hints, strict=True):
        # each hint folded on its own
        assert block.count("<details>") == len(exercise.hints)


#: What would tie a notebook to this repository's folders: reading a file, or a path
#: relative to the checkout.
_FILE_ACCESS = re.compile(
    r"""\bopen\(|\bPath\(|read_text|read_bytes|torch\.load|np\.load"""
    r"""|['"](\.\.?/|data/|records/|book/|_build/|labs/|chapter_code/)"""
)


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_notebooks_read_no_file_and_name_no_path_of_the_repository(
    lab: labs.Lab,
) -> None:
    """A lab opened alone (a laptop, Colab) has no checkout beside it: its code cells
    read no file and name no path relative to the repository; the data they use is
    written into the notebook or drawn from a seed."""
    for edition in ("student", "solution"):
        for cell in labs.notebook(lab, edition).cells:
            if cell.cell_type == "code":
                found = _FILE_ACCESS.search(cell.source)
                near = (
                    ""
                    if found is None
                    else cell.source[max(0, found.start() - 40) : found.end() + 40]
                )
                assert found is None, (
                    f"{lab.slug} ({edition}) reads a file or names a path: {near!r}"
                )


def _code_key(code: str) -> str:
    """Code compared as a reader copies it: whitespace and the ``torch.`` prefix do not
    count."""
    return re.sub(r"\s+", "", code).replace("torch.", "")


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_no_hint_writes_out_a_line_of_the_answer_or_an_equation_the_task_does_not_give(
    lab: labs.Lab,
) -> None:
    """The last hint gives the shape of the answer, not the answer: no code in any hint
    holds a whole solution line or its right-hand side, and a hint's equation is one the
    task or the lab's introduction already states (a hint may point at the
    specification, not write the update the exercise asks for)."""
    for exercise in lab.exercises:
        answers = []
        for line in _solution_lines(exercise):
            right = re.split(r"^return\s|(?<![=!<>])=(?!=)", line, maxsplit=1)[-1]
            answers += [_code_key(line), _code_key(right)]
        answers = [a for a in answers if len(a) >= 15]
        for k, hint in enumerate(exercise.hints, start=1):
            for span in re.findall(r"`([^`]+)`", hint):
                given = [a for a in answers if a in _code_key(span)]
                assert not given, (
                    f"{exercise.target}: hint {k} writes out the answer's {given[0]!r}"
                )
            for equation in re.findall(r"\$([^$]*=[^$]*)\$", hint):
                assert equation in exercise.task or equation in lab.intro, (
                    f"{exercise.target}: hint {k} writes out ${equation}$, which the "
                    "task does not give"
                )


def test_written_notebooks_and_zips_are_byte_stable(tmp_path: Path) -> None:
    first = {p.name: p.read_bytes() for p in labs.write_labs(tmp_path / "a")}
    second = {p.name: p.read_bytes() for p in labs.write_labs(tmp_path / "b")}
    assert first == second
    assert len(first) == 3 * len(LABS) + 3
    for edition in ("student", "solution"):
        with zipfile.ZipFile(io.BytesIO(first[f"labs-{edition}.zip"])) as archive:
            assert archive.namelist() == sorted(
                f"{lab.slug}-{edition}.ipynb" for lab in LABS
            )
            assert (
                archive.read(f"depth-{edition}.ipynb")
                == first[f"depth-{edition}.ipynb"]
            )


def test_a_build_rewrites_the_labs_only_when_an_input_or_a_written_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "labs"
    written = labs.write_labs_if_stale(out)
    assert written is not None
    assert len(written) == 3 * len(LABS) + 3
    # the same inputs, the same files: nothing to do
    assert labs.write_labs_if_stale(out) is None
    student = out / "depth-student.ipynb"
    text = student.read_bytes()
    student.write_bytes(text.replace(b"YOUR CODE HERE", b"EDITED BY HAND"))
    assert labs.write_labs_if_stale(out) is not None
    assert student.read_bytes() == text
    student.unlink()
    assert labs.write_labs_if_stale(out) is not None
    assert student.read_bytes() == text
    (out / labs.STAMP).write_text("{not json")
    assert labs.write_labs_if_stale(out) is not None  # a damaged stamp
    monkeypatch.setattr(labs, "inputs_key", lambda root=labs.ROOT: "another key")
    assert labs.write_labs_if_stale(out) is not None  # an input changed


def test_a_build_starts_writing_stale_labs_in_a_process_of_its_own_and_sphinx_then_finds_them_written(  # noqa: E501 (a test name)
    tmp_path: Path,
) -> None:
    out = tmp_path / "labs"
    writer = labs.start_writing_if_stale(out)  # no stamp yet: stale
    assert writer is not None
    assert writer.wait(timeout=300) == 0
    assert (
        labs.write_labs_if_stale(out) is None
    )  # what Sphinx's start calls: nothing left to write
    assert labs.start_writing_if_stale(out) is None  # fresh: no process started


def test_the_labs_inputs_key_follows_the_taught_code_and_the_lab_modules(
    tmp_path: Path,
) -> None:
    for folder in ("labs", "chapter_code/rnn"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    first = labs.inputs_key(tmp_path)
    assert labs.inputs_key(tmp_path) == first
    for folder in ("labs", "chapter_code/rnn"):
        (tmp_path / folder / "a.py").write_text("x = 2\n")
        assert labs.inputs_key(tmp_path) != first
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    (tmp_path / "chapter_code" / "rnn" / "b.py").write_text("")
    assert labs.inputs_key(tmp_path) != first  # a new module


def test_markers_change_no_key_and_no_listing(tmp_path: Path) -> None:
    plain = "def f(x):\n    return x + 1\n"
    marked = (
        "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    )
    (tmp_path / "a.py").write_text(plain)
    (tmp_path / "b.py").write_text(marked)
    (tmp_path / "c.txt").write_text(marked)
    assert (
        files.code_bytes(tmp_path / "a.py")
        == files.code_bytes(tmp_path / "b.py")
        == plain.encode()
    )
    # only Python sources
    assert files.code_bytes(tmp_path / "c.txt") == marked.encode()
    assert labs.hide_markers(marked) == plain


def test_numbered_markers_are_dropped_and_their_words_kept() -> None:
    code = (
        "x = 1  # [1]\n    # [3] position t takes in the pair\ny = 2  # (B, H)  # [2]\n"
    )
    assert (
        labs.drop_numbered_markers(code)
        == "x = 1\n    # position t takes in the pair\ny = 2  # (B, H)\n"
    )


def test_bad_labs_are_named_errors() -> None:
    with pytest.raises(
        labs.LabError, match="chapter_code.rnn.recurrence:rnn_parameters: expected one"
    ):
        labs.solution_source("chapter_code.rnn.recurrence:rnn_parameters")
    with pytest.raises(labs.LabError, match="no top-level function or class 'nothing'"):
        labs.solution_source("chapter_code.rnn.recurrence:nothing")
    with pytest.raises(labs.LabError, match="'module:name'"):
        labs.solution_source("chapter_code.rnn.recurrence")
    with pytest.raises(labs.LabError, match="hints must be a non-empty tuple"):
        labs.Exercise("m:f", "task", "one hint as a string", print)
    with pytest.raises(labs.LabError, match="must be finite"):
        labs._rounded({"x": [1.0, math.nan]})


def test_the_book_s_own_functions_pass_their_checkpoints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, exercise in EXERCISES.items():
        module, _, function = exercise.target.partition(":")
        check(name, getattr(importlib.import_module(module), function))
    assert capsys.readouterr().out.count("Checkpoint passed") == len(EXERCISES)


# -------------------------------------------------------------- plausible wrong answers


def rnn_no_tanh(x_t, h_prev, weight_ih, weight_hh, bias):
    return x_t @ weight_ih.T + h_prev @ weight_hh.T + bias


def rnn_no_transpose(x_t, h_prev, weight_ih, weight_hh, bias):
    return torch.tanh(x_t @ weight_ih + h_prev @ weight_hh + bias)


def rnn_no_bias(x_t, h_prev, weight_ih, weight_hh, bias):
    return torch.tanh(x_t @ weight_ih.T + h_prev @ weight_hh.T)


def pad_at_the_end(sequences):
    longest = max(s.shape[0] for s in sequences)
    batch = sequences[0].new_zeros(len(sequences), longest, sequences[0].shape[1])
    mask = torch.zeros(len(sequences), longest, dtype=torch.bool)
    for i, s in enumerate(sequences):
        # padded at the front: the mask below says otherwise
        batch[i, longest - s.shape[0] :] = s
        mask[i, : s.shape[0]] = True
    return batch, mask


def pad_float_mask(sequences):
    batch = torch.nn.utils.rnn.pad_sequence(list(sequences), batch_first=True)
    mask = torch.zeros(batch.shape[:2])
    for i, s in enumerate(sequences):
        mask[i, : s.shape[0]] = 1.0
    return batch, mask


def _loop(
    x,
    weight_ih,
    weight_hh,
    bias,
    h0=None,
    mask=None,
    use_mask=True,
    invert=False,
    carry=True,
):
    from chapter_code.rnn.recurrence import check_loop_inputs, rnn_step

    h, m = check_loop_inputs(x, weight_ih, weight_hh, h0, mask)
    start, states = h, []
    for t in range(x.shape[1]):
        h_new = rnn_step(x[:, t], h if carry else start, weight_ih, weight_hh, bias)
        if m is not None and use_mask:
            keep = m[:, t : t + 1]
            keep = 1 - keep if invert else keep
            h_new = keep * h_new + (1 - keep) * h
        h = h_new
        states.append(h)
    return torch.stack(states, dim=1), h


def loop_without_mask(x, weight_ih, weight_hh, bias, h0=None, mask=None):
    return _loop(x, weight_ih, weight_hh, bias, h0, mask, use_mask=False)


def loop_with_inverted_mask(x, weight_ih, weight_hh, bias, h0=None, mask=None):
    return _loop(x, weight_ih, weight_hh, bias, h0, mask, invert=True)


def loop_without_carry(x, weight_ih, weight_hh, bias, h0=None, mask=None):
    return _loop(x, weight_ih, weight_hh, bias, h0, mask, carry=False)


def _bptt(
    x,
    states,
    h0,
    weight_ih,
    weight_hh,
    grad_states,
    tanh=True,
    transpose_carry=False,
    prev_is_own=False,
):
    from chapter_code.bptt.gradients import BPTTGrads

    steps = states.shape[1]
    prev = torch.cat([h0.unsqueeze(1), states[:, :-1]], dim=1)
    grad_x, per_use = torch.zeros_like(x), x.new_zeros(steps, *weight_hh.shape)
    grad_w_ih, grad_b, carry = (
        torch.zeros_like(weight_ih),
        x.new_zeros(weight_hh.shape[0]),
        torch.zeros_like(h0),
    )
    for t in reversed(range(steps)):
        g = grad_states[:, t] + carry
        da = g * (1.0 - states[:, t] ** 2) if tanh else g
        per_use[t] = da.T @ (states[:, t] if prev_is_own else prev[:, t])
        grad_w_ih += da.T @ x[:, t]
        grad_b += da.sum(dim=0)
        grad_x[:, t] = da @ weight_ih
        carry = da @ (weight_hh.T if transpose_carry else weight_hh)
    return BPTTGrads(grad_w_ih, per_use.sum(dim=0), grad_b, grad_x, carry, per_use)


def bptt_without_tanh_derivative(*args):
    return _bptt(*args, tanh=False)


def bptt_carry_transposed(*args):
    return _bptt(*args, transpose_carry=True)


def bptt_pairs_with_own_state(*args):
    return _bptt(*args, prev_is_own=True)


def jacobian_without_tanh(states, weight_hh):
    product, norms = torch.eye(weight_hh.shape[0], dtype=states.dtype), [1.0]
    for _ in range(states.shape[0]):
        product = product @ weight_hh
        norms.append(torch.linalg.matrix_norm(product, ord=2).item())
    return norms


def jacobian_in_forward_order(states, weight_hh):
    product, norms = torch.eye(weight_hh.shape[0], dtype=states.dtype), [1.0]
    for t in range(states.shape[0]):  # walks from the first state instead of the last
        product = product @ ((1.0 - states[t] ** 2).unsqueeze(1) * weight_hh)
        norms.append(torch.linalg.matrix_norm(product, ord=2).item())
    return norms


def clip_per_parameter(params, kappa):
    grads = [p.grad for p in params if p.grad is not None]
    total = math.sqrt(sum(float(g.pow(2).sum()) for g in grads))
    for g in grads:
        g.mul_(min(1.0, kappa / (g.norm().item() + 1e-6)))
    return total


def clip_returns_the_clipped_norm(params, kappa):
    grads = [p.grad for p in params if p.grad is not None]
    total = math.sqrt(sum(float(g.pow(2).sum()) for g in grads))
    for g in grads:
        g.mul_(min(1.0, kappa / (total + 1e-6)))
    return min(total, kappa)


def clip_always_rescales(params, kappa):
    grads = [p.grad for p in params if p.grad is not None]
    total = math.sqrt(sum(float(g.pow(2).sum()) for g in grads))
    for g in grads:
        g.mul_(kappa / (total + 1e-6))
    return total


def clip_never_in_place(params, kappa):
    grads = [p.grad for p in params if p.grad is not None]
    total = math.sqrt(sum(float(g.pow(2).sum()) for g in grads))
    # new tensors: no .grad changes
    grads = [g * min(1.0, kappa / (total + 1e-6)) for g in grads]
    return total


def gates_in_order_ifog(x_t, h_prev, weight_ih, weight_hh, bias):
    a_i, a_f, a_o, a_g = (x_t @ weight_ih.T + h_prev @ weight_hh.T + bias).chunk(
        4, dim=1
    )  # PyTorch's is i, f, g, o
    return torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)


def gates_all_sigmoid(x_t, h_prev, weight_ih, weight_hh, bias):
    return tuple(
        torch.sigmoid(x_t @ weight_ih.T + h_prev @ weight_hh.T + bias).chunk(4, dim=1)
    )


def gates_without_recurrence(x_t, h_prev, weight_ih, weight_hh, bias):
    a_i, a_f, a_g, a_o = (x_t @ weight_ih.T + bias).chunk(4, dim=1)
    return torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)


def _lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias):
    from chapter_code.gated.gates import lstm_gates

    return lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)


def lstm_without_input_gate(x_t, h_prev, c_prev, weight_ih, weight_hh, bias):
    i, f, g, o = _lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)
    c = f * c_prev + g
    return o * torch.tanh(c), c


def lstm_output_without_tanh(x_t, h_prev, c_prev, weight_ih, weight_hh, bias):
    i, f, g, o = _lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)
    c = f * c_prev + i * g
    return o * c, c


def lstm_returns_c_then_h(x_t, h_prev, c_prev, weight_ih, weight_hh, bias):
    i, f, g, o = _lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)
    c = f * c_prev + i * g
    return c, o * torch.tanh(c)


def _gru(
    x_t,
    h_prev,
    weight_ih,
    weight_hh,
    bias_ih,
    bias_hh,
    reset_after,
    swap=False,
    cho_both=False,
    blocks_zrn=False,
    b_n_outside=False,
    no_bias_hh=False,
):
    gx_r, gx_z, gx_n = (x_t @ weight_ih.T + bias_ih).chunk(3, dim=1)
    w_r, w_z, w_n = weight_hh.chunk(3, dim=0)
    b_r, b_z, b_n = bias_hh.chunk(3) if not no_bias_hh else (0.0, 0.0, 0.0)
    if blocks_zrn:  # read as if PyTorch stored z, r, n
        (gx_r, w_r, b_r), (gx_z, w_z, b_z) = (gx_z, w_z, b_z), (gx_r, w_r, b_r)
    r = torch.sigmoid(gx_r + h_prev @ w_r.T + b_r)
    u = torch.sigmoid(gx_z + h_prev @ w_z.T + b_z)
    if b_n_outside:
        n = torch.tanh(gx_n + r * (h_prev @ w_n.T) + b_n)
    elif reset_after and not cho_both:
        n = torch.tanh(gx_n + r * (h_prev @ w_n.T + b_n))
    else:
        n = torch.tanh(gx_n + (r * h_prev) @ w_n.T + b_n)
    return (1 - u) * h_prev + u * n if swap else u * h_prev + (1 - u) * n


def gru_update_gate_swapped(*args, reset_after):
    return _gru(*args, reset_after, swap=True)


def gru_cho_form_always(*args, reset_after):
    return _gru(*args, reset_after, cho_both=True)


def gru_pytorch_form_always(*args, reset_after):
    return _gru(*args, True)


def gru_blocks_read_as_z_r_n(*args, reset_after):
    return _gru(*args, reset_after, blocks_zrn=True)


def gru_b_n_outside_the_reset(*args, reset_after):
    return _gru(*args, reset_after, b_n_outside=reset_after)


def gru_without_recurrent_bias(*args, reset_after):
    return _gru(*args, reset_after, no_bias_hh=True)


def lm_summed(logits, targets):
    log_probs = torch.log_softmax(logits.reshape(-1, logits.shape[-1]), dim=-1)
    # forgot to divide by the number of positions
    loss = -log_probs.gather(1, targets.reshape(-1, 1)).sum()
    return loss, math.exp(loss.item()), loss.item() / math.log(2)


def lm_bits_in_nats(logits, targets):
    log_probs = torch.log_softmax(logits.reshape(-1, logits.shape[-1]), dim=-1)
    loss = -log_probs.gather(1, targets.reshape(-1, 1)).mean()
    return loss, math.exp(loss.item()), loss.item()  # bits not converted


def lm_detached(logits, targets):
    log_probs = torch.log_softmax(logits.detach().reshape(-1, logits.shape[-1]), dim=-1)
    nats = -log_probs.gather(1, targets.reshape(-1, 1)).mean().item()
    return nats, math.exp(nats), nats / math.log(2)


def lm_base_two_perplexity(logits, targets):
    log_probs = torch.log_softmax(logits.reshape(-1, logits.shape[-1]), dim=-1)
    loss = -log_probs.gather(1, targets.reshape(-1, 1)).mean()
    return loss, 2 ** loss.item(), loss.item() / math.log(2)


def windows_not_shifted(ids, window, batch_size, generator):
    starts = torch.randint(0, ids.numel() - window, (batch_size,), generator=generator)
    rows = starts[:, None] + torch.arange(window)
    return ids[rows], ids[rows]


def windows_one_start_at_a_time(ids, window, batch_size, generator):
    starts = torch.cat(
        [
            torch.randint(1, ids.numel() - window, (1,), generator=generator)
            for _ in range(batch_size)
        ]
    )
    rows = starts[:, None] + torch.arange(window + 1)
    return ids[rows][:, :-1], ids[rows][:, 1:]


def _fit(model, ids, config, generator, clip=True, zero_grad=True):
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    history = []
    for step in range(1, config.steps + 1):
        x, y = random_windows(ids, config.window, config.batch_size, generator)
        logits, _ = model(x)
        loss, _, _ = lm_loss_and_ppl(logits, y)
        if zero_grad:
            opt.zero_grad()
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        if step % config.log_every == 0 or step == config.steps:
            history.append((step, loss.item()))
    return history


def fit_without_clipping(model, ids, config, generator):
    return _fit(model, ids, config, generator, clip=False)


def fit_without_zero_grad(model, ids, config, generator):
    return _fit(model, ids, config, generator, zero_grad=False)


def fit_logging_from_zero(model, ids, config, generator):
    return [(step - 1, loss) for step, loss in _fit(model, ids, config, generator)]


def softmax_without_temperature(logits, temperature):
    return torch.softmax(logits, dim=-1)


def temperature_multiplied(logits, temperature):
    return torch.softmax(logits * temperature, dim=-1)


def softmax_over_the_batch(logits, temperature):
    return torch.softmax(logits / temperature, dim=0)


def _temperature(logits, temperature):
    from chapter_code.sampling.rules import temperature_probs

    return temperature_probs(logits, temperature)


def top_k_not_renormalised(logits, k, temperature=1.0):
    probs = _temperature(logits, temperature)
    kept = torch.zeros_like(probs).scatter(-1, logits.topk(k, dim=-1).indices, 1.0)
    return probs * kept


def top_k_smallest(logits, k, temperature=1.0):
    probs = _temperature(logits, temperature)
    kept = torch.zeros_like(probs).scatter(
        -1, logits.topk(k, dim=-1, largest=False).indices, 1.0
    )
    return probs * kept / (probs * kept).sum(dim=-1, keepdim=True)


def _nucleus(logits, p, temperature, early=False, unsorted_back=False, at_most=False):
    probs = _temperature(logits, temperature)
    order = logits.argsort(dim=-1, descending=True, stable=True)
    sorted_probs = probs.gather(-1, order)
    mass = sorted_probs.cumsum(dim=-1)
    before = mass - sorted_probs
    keep = (mass < p if early else before <= p if at_most else before < p).to(
        probs.dtype
    )
    keep[..., 0] = 1.0
    kept = keep if unsorted_back else torch.zeros_like(probs).scatter(-1, order, keep)
    return probs * kept / (probs * kept).sum(dim=-1, keepdim=True)


def nucleus_keeps_a_tie_at_p(logits, p, temperature=1.0):
    return _nucleus(logits, p, temperature, at_most=True)


def nucleus_drops_the_crossing_token(logits, p, temperature=1.0):
    return _nucleus(logits, p, temperature, early=True)


def nucleus_flags_left_in_sorted_order(logits, p, temperature=1.0):
    return _nucleus(logits, p, temperature, unsorted_back=True)


def chi_square_over_observed(counts, probs):
    counts, support = counts.double(), probs > 0
    if counts[~support].sum() > 0:
        return math.inf, int(support.sum()) - 1
    expected = probs.double() * counts.sum()
    return float(
        ((counts[support] - expected[support]) ** 2 / counts[support]).sum()
    ), int(support.sum()) - 1


def chi_square_counts_every_token(counts, probs):
    counts, support = counts.double(), probs > 0
    expected = probs.double() * counts.sum()
    if counts[~support].sum() > 0:
        return math.inf, probs.numel() - 1
    return float(
        ((counts[support] - expected[support]) ** 2 / expected[support]).sum()
    ), probs.numel() - 1


def chi_square_ignores_impossible_draws(counts, probs):
    counts, support = counts.double(), probs > 0
    expected = probs.double() * counts.sum()
    return float(
        ((counts[support] - expected[support]) ** 2 / expected[support]).sum()
    ), int(support.sum()) - 1


def bidirectional_not_flipped_back(x, forward, backward):
    return torch.cat([forward(x)[0], backward(x.flip(1))[0]], dim=-1)


def bidirectional_backward_reads_forwards(x, forward, backward):
    return torch.cat([forward(x)[0], backward(x)[0]], dim=-1)


def bidirectional_halves_swapped(x, forward, backward):
    return torch.cat([backward(x.flip(1))[0].flip(1), forward(x)[0]], dim=-1)


def stack_every_layer_reads_x(x, layers):
    for layer in layers:
        h, _ = layer(x)
    return h


def stack_returns_the_first_layer(x, layers):
    return layers[0](x)[0]


def _prefix(model, ids, context, positions, extra=0, shift=0):
    rows = torch.arange(positions)[:, None] + torch.arange(context + extra)
    logits, _ = model(ids[rows])
    return lm_loss_and_ppl(
        logits[:, -1 - extra], ids[context - shift : context - shift + positions]
    )[0].item()


def prefix_reads_the_target(model, ids, context, positions):
    # a window of C + 1 scored at its next-to-last
    return _prefix(model, ids, context, positions, extra=1)


def prefix_scores_the_last_read(model, ids, context, positions):
    # scored on the last character it read
    return _prefix(model, ids, context, positions, shift=1)


def combine_in_the_wrong_order(first, second):
    (a1, b1), (a2, b2) = first, second
    return a1 * a2, a1 * b2 + b1


def combine_adds_the_scalings(first, second):
    (a1, b1), (a2, b2) = first, second
    return a1 + a2, a2 * b1 + b2


def loop_ignores_c0(a, b, c0=None):
    _check_pairs(a, b, c0)
    c, states = torch.zeros_like(b[:, 0]), []
    for t in range(a.shape[1]):
        c = a[:, t] * c + b[:, t]
        states.append(c)
    return torch.stack(states, dim=1)


def loop_adds_before_scaling(a, b, c0=None):
    c, states = (torch.zeros_like(b[:, 0]) if c0 is None else c0), []
    for t in range(a.shape[1]):
        c = a[:, t] * (c + b[:, t])
        states.append(c)
    return torch.stack(states, dim=1)


def scan_that_is_a_loop(a, b, c0=None):
    c = torch.zeros_like(b[:, 0]) if c0 is None else c0
    pair, states = (torch.ones_like(c), c), []
    for t in range(a.shape[1]):
        pair = combine(pair, (a[:, t], b[:, t]))
        states.append(pair[1])
    return torch.stack(states, dim=1)


def _scan(a, b, c0=None, fold=True, swapped=False, in_place=False):
    if c0 is not None and fold:
        b = torch.cat([(a[:, 0] * c0 + b[:, 0]).unsqueeze(1), b[:, 1:]], dim=1)
    if in_place:
        # the caller's tensors are safe; the rounds write over values autograd saved
        a, b = a.clone(), b.clone()
    length, offset = a.shape[1], 1
    while offset < length:
        early, late = (a[:, :-offset], b[:, :-offset]), (a[:, offset:], b[:, offset:])
        a_new, b_new = combine(late, early) if swapped else combine(early, late)
        if in_place:
            a[:, offset:] = a_new
            b[:, offset:] = b_new
        else:
            a = torch.cat([a[:, :offset], a_new], dim=1)
            b = torch.cat([b[:, :offset], b_new], dim=1)
        offset *= 2
    return b


def scan_without_c0(a, b, c0=None):
    return _scan(a, b, c0, fold=False)


def scan_combining_in_the_wrong_order(a, b, c0=None):
    return _scan(a, b, c0, swapped=True)


def scan_writing_in_place(a, b, c0=None):
    return _scan(a, b, c0, in_place=True)


class GatesSwapped(InputGatedLSTM):
    def forward(self, x, parallel=True):
        i, f, g, o = self.blocks(x).chunk(4, dim=-1)
        # input and forget gate exchanged
        a, b = torch.sigmoid(i), torch.sigmoid(f) * torch.tanh(g)
        c = scan_linear(a, b) if parallel else loop_linear(a, b)
        return torch.sigmoid(o) * torch.tanh(c)


class CellWithoutTanh(InputGatedLSTM):
    def forward(self, x, parallel=True):
        i, f, g, o = self.blocks(x).chunk(4, dim=-1)
        a, b = torch.sigmoid(f), torch.sigmoid(i) * torch.tanh(g)
        c = scan_linear(a, b) if parallel else loop_linear(a, b)
        return torch.sigmoid(o) * c


class BlocksInOrderIFOG(InputGatedLSTM):
    def forward(self, x, parallel=True):
        i, f, o, g = self.blocks(x).chunk(4, dim=-1)  # nn.LSTM's order is i, f, g, o
        a, b = torch.sigmoid(f), torch.sigmoid(i) * torch.tanh(g)
        c = scan_linear(a, b) if parallel else loop_linear(a, b)
        return torch.sigmoid(o) * torch.tanh(c)


class AlwaysLoops(InputGatedLSTM):
    def forward(self, x, parallel=True):
        i, f, g, o = self.blocks(x).chunk(4, dim=-1)
        c = loop_linear(
            torch.sigmoid(f), torch.sigmoid(i) * torch.tanh(g)
        )  # parallel ignored
        return torch.sigmoid(o) * torch.tanh(c)


class AlwaysScans(InputGatedLSTM):
    def forward(self, x, parallel=True):
        i, f, g, o = self.blocks(x).chunk(4, dim=-1)
        c = scan_linear(
            torch.sigmoid(f), torch.sigmoid(i) * torch.tanh(g)
        )  # parallel ignored
        return torch.sigmoid(o) * torch.tanh(c)


class LoopWithoutCandidate(InputGatedLSTM):
    def forward(self, x, parallel=True):
        i, f, g, o = self.blocks(x).chunk(4, dim=-1)
        a, b = torch.sigmoid(f), torch.sigmoid(i) * torch.tanh(g)
        c = scan_linear(a, b) if parallel else loop_linear(a, torch.sigmoid(i))
        return torch.sigmoid(o) * torch.tanh(c)


def mean_including_padding(states, mask):
    return states.mean(dim=1)


def mean_over_the_padded_length(states, mask):
    keep = (mask != 0).to(states.dtype).unsqueeze(-1)
    return (states * keep).sum(dim=1) / states.shape[1]


def sum_of_the_real_states(states, mask):
    return (states * (mask != 0).to(states.dtype).unsqueeze(-1)).sum(dim=1)


def clip_values_above_only(params, limit):
    grads = [p.grad for p in params if p.grad is not None]
    changed = sum(int((g.abs() > limit).sum()) for g in grads)
    for g in grads:
        g.clamp_(max=limit)  # the negative side forgotten
    return changed


def clip_values_into_new_tensors(params, limit):
    grads = [p.grad for p in params if p.grad is not None]
    changed = sum(int((g.abs() > limit).sum()) for g in grads)
    grads = [g.clamp(-limit, limit) for g in grads]  # new tensors: no .grad changes
    return changed


def clip_values_by_rescaling(params, limit):
    grads = [p.grad for p in params if p.grad is not None]
    changed = sum(int((g.abs() > limit).sum()) for g in grads)
    for g in grads:
        # every entry scaled: the direction kept, as by the norm
        g.mul_(min(1.0, limit / g.abs().max().item()))
    return changed


def clip_values_counted_after(params, limit):
    grads = [p.grad for p in params if p.grad is not None]
    for g in grads:
        g.clamp_(-limit, limit)
    return sum(int((g.abs() > limit).sum()) for g in grads)


def grad_through_its_own_step(a, grad_c):
    return loop_linear(a.flip(1), grad_c.flip(1)).flip(1)


def _onward(a):
    return torch.cat([a[:, 1:], torch.zeros_like(a[:, :1])], dim=1)


def grad_not_turned_back(a, grad_c):
    return loop_linear(_onward(a).flip(1), grad_c.flip(1))


def grad_run_forwards(a, grad_c):
    return loop_linear(_onward(a), grad_c)


MISTAKES = [
    (
        "checkpoint_rnn_step",
        rnn_no_tanh,
        "because the squashing function is applied last",
    ),
    ("checkpoint_rnn_step", rnn_no_transpose, "which way round each product goes"),
    ("checkpoint_rnn_step", rnn_no_bias, "without its bias"),
    (
        "checkpoint_pad_batch",
        pad_at_the_end,
        "row 1 of the batch should start with sequence 1",
    ),
    ("checkpoint_pad_batch", pad_float_mask, "the mask should be bool"),
    (
        "checkpoint_rnn_loop",
        loop_without_mask,
        "a padded step (mask 0) changed the state",
    ),
    ("checkpoint_rnn_loop", loop_with_inverted_mask, "the mask is 1 on real steps"),
    (
        "checkpoint_rnn_loop",
        loop_without_carry,
        "carry the new state into the next step",
    ),
    (
        "checkpoint_bptt_vanilla",
        bptt_without_tanh_derivative,
        "even the gradient at the last input is off",
    ),
    (
        "checkpoint_bptt_vanilla",
        bptt_carry_transposed,
        "check what each step hands back",
    ),
    (
        "checkpoint_bptt_vanilla",
        bptt_pairs_with_own_state,
        "the state that step read, h_{t-1}",
    ),
    ("checkpoint_jacobian_product_norms", jacobian_without_tanh, "those of W_hh^d"),
    (
        "checkpoint_jacobian_product_norms",
        jacobian_in_forward_order,
        "at distance 1 the norm should be",
    ),
    ("checkpoint_clip_gradients", clip_per_parameter, "not one per parameter"),
    (
        "checkpoint_clip_gradients",
        clip_returns_the_clipped_norm,
        "norm before clipping, 5.0",
    ),
    (
        "checkpoint_clip_gradients",
        clip_always_rescales,
        "below kappa (1.0) must not change",
    ),
    (
        "checkpoint_clip_gradients",
        clip_never_in_place,
        "never written into the parameters' own .grad",
    ),
    ("checkpoint_lstm_gates", gates_in_order_ifog, "the order i, f, g, o"),
    ("checkpoint_lstm_gates", gates_all_sigmoid, "as a tanh does"),
    (
        "checkpoint_lstm_gates",
        gates_without_recurrence,
        "one affine map of x_t and h_prev",
    ),
    ("checkpoint_lstm_cell_step", lstm_without_input_gate, "c_t differs"),
    (
        "checkpoint_lstm_cell_step",
        lstm_output_without_tanh,
        "a squashed copy of the new cell state",
    ),
    ("checkpoint_lstm_cell_step", lstm_returns_c_then_h, "the wrong way round"),
    (
        "checkpoint_gru_step",
        gru_update_gate_swapped,
        "blends h_prev and the candidate the wrong way round",
    ),
    (
        "checkpoint_gru_step",
        gru_cho_form_always,
        "with reset_after=True, gru_step gives Cho et al.'s form",
    ),
    (
        "checkpoint_gru_step",
        gru_pytorch_form_always,
        "reset_after=False gives nn.GRUCell's result",
    ),
    (
        "checkpoint_gru_step",
        gru_blocks_read_as_z_r_n,
        "your r and u are each computed from the other's blocks",
    ),
    (
        "checkpoint_gru_step",
        gru_b_n_outside_the_reset,
        "once the recurrent bias b_n is zero",
    ),
    (
        "checkpoint_gru_step",
        gru_without_recurrent_bias,
        "the recurrent biases b_r, b_z and b_n are left out",
    ),
    (
        "checkpoint_lm_loss_and_ppl",
        lm_summed,
        "perplexity of equal logits should be 65",
    ),
    ("checkpoint_lm_loss_and_ppl", lm_bits_in_nats, "that is the loss in nats itself"),
    ("checkpoint_lm_loss_and_ppl", lm_detached, "should be a tensor"),
    (
        "checkpoint_lm_loss_and_ppl",
        lm_base_two_perplexity,
        "perplexity of equal logits",
    ),
    (
        "checkpoint_random_windows",
        windows_not_shifted,
        "the targets should be the inputs shifted by one",
    ),
    (
        "checkpoint_random_windows",
        windows_one_start_at_a_time,
        "draw the B starts at once",
    ),
    ("checkpoint_fit_next_token", fit_without_clipping, "above clip = 0.05"),
    (
        "checkpoint_fit_next_token",
        fit_without_zero_grad,
        "clear the old gradients before each backward",
    ),
    (
        "checkpoint_fit_next_token",
        fit_logging_from_zero,
        "log (step, loss) every log_every steps",
    ),
    (
        "checkpoint_temperature_probs",
        softmax_without_temperature,
        "the temperature-1 distribution",
    ),
    (
        "checkpoint_temperature_probs",
        temperature_multiplied,
        "divide rather than multiply",
    ),
    (
        "checkpoint_temperature_probs",
        softmax_over_the_batch,
        "each row of a batch should sum to 1",
    ),
    ("checkpoint_top_k_probs", top_k_not_renormalised, "should sum to 1 (renormalise)"),
    ("checkpoint_top_k_probs", top_k_smallest, "must drop the third token"),
    (
        "checkpoint_nucleus_probs",
        nucleus_drops_the_crossing_token,
        "makes the mass reach p belongs to the nucleus",
    ),
    (
        "checkpoint_nucleus_probs",
        nucleus_keeps_a_tie_at_p,
        "whose mass ranked above it is exactly p",
    ),
    (
        "checkpoint_nucleus_probs",
        nucleus_flags_left_in_sorted_order,
        "put the kept flags back in the original order",
    ),
    (
        "checkpoint_chi_square_statistic",
        chi_square_over_observed,
        "not by the observed one",
    ),
    (
        "checkpoint_chi_square_statistic",
        chi_square_counts_every_token,
        "a token of probability zero does not count",
    ),
    (
        "checkpoint_chi_square_statistic",
        chi_square_ignores_impossible_draws,
        "must fail the check outright",
    ),
    (
        "checkpoint_bidirectional_states",
        bidirectional_not_flipped_back,
        "the backward half is in reversed time",
    ),
    (
        "checkpoint_bidirectional_states",
        bidirectional_backward_reads_forwards,
        "should read x_T first",
    ),
    (
        "checkpoint_bidirectional_states",
        bidirectional_halves_swapped,
        "its states come first",
    ),
    (
        "checkpoint_stacked_states",
        stack_every_layer_reads_x,
        "not the 3 input features",
    ),
    (
        "checkpoint_stacked_states",
        stack_returns_the_first_layer,
        "the first layer's states",
    ),
    ("checkpoint_prefix_only_loss", prefix_reads_the_target, "it read windows of [5]"),
    (
        "checkpoint_prefix_only_loss",
        prefix_scores_the_last_read,
        "an honest model should score",
    ),
    ("checkpoint_combine", combine_in_the_wrong_order, "'second, then first'"),
    ("checkpoint_combine", combine_adds_the_scalings, "the composed a is wrong"),
    ("checkpoint_loop_linear", loop_ignores_c0, "begin from c0"),
    (
        "checkpoint_loop_linear",
        loop_adds_before_scaling,
        "first differ from the book's at step 1",
    ),
    (
        "checkpoint_scan_linear",
        scan_that_is_a_loop,
        "that is a loop over time, not a scan",
    ),
    ("checkpoint_scan_linear", scan_without_c0, "fold c0 into the first step"),
    (
        "checkpoint_scan_linear",
        scan_combining_in_the_wrong_order,
        "the scan differs from the loop",
    ),
    (
        "checkpoint_scan_linear",
        scan_writing_in_place,
        "a or b is written in place during the rounds",
    ),
    (
        "checkpoint_input_gated_lstm",
        GatesSwapped,
        "your input gate and forget gate play each other's parts",
    ),
    (
        "checkpoint_input_gated_lstm",
        BlocksInOrderIFOG,
        "your i, f, g, o come from the wrong blocks",
    ),
    (
        "checkpoint_input_gated_lstm",
        CellWithoutTanh,
        "passes the cell state to the output unsquashed",
    ),
    (
        "checkpoint_input_gated_lstm",
        AlwaysLoops,
        "with parallel=True your forward never ran scan_linear",
    ),
    (
        "checkpoint_input_gated_lstm",
        AlwaysScans,
        "with parallel=False your forward still ran scan_linear",
    ),
    (
        "checkpoint_input_gated_lstm",
        LoopWithoutCandidate,
        "parallel=True and parallel=False give different",
    ),
    ("checkpoint_masked_mean_state", mean_including_padding, "padded ones included"),
    (
        "checkpoint_masked_mean_state",
        mean_over_the_padded_length,
        "you divide by the padded length, 5",
    ),
    (
        "checkpoint_masked_mean_state",
        sum_of_the_real_states,
        "sums over the real steps, not means",
    ),
    (
        "checkpoint_clip_gradient_values",
        clip_values_above_only,
        "entries below -3 were left as they were",
    ),
    (
        "checkpoint_clip_gradient_values",
        clip_values_into_new_tensors,
        "the parameters' .grad did not change",
    ),
    (
        "checkpoint_clip_gradient_values",
        clip_values_by_rescaling,
        "an entry already inside [-3, 3] changed",
    ),
    (
        "checkpoint_clip_gradient_values",
        clip_values_counted_after,
        "count them before you clip, not after",
    ),
    (
        "checkpoint_linear_recurrence_grad",
        grad_through_its_own_step,
        "through its own scaling a_t",
    ),
    (
        "checkpoint_linear_recurrence_grad",
        grad_not_turned_back,
        "your gradients come out in reversed time",
    ),
    (
        "checkpoint_linear_recurrence_grad",
        grad_run_forwards,
        "the gradient of b_1 is grad_c's first step alone",
    ),
]


@pytest.mark.parametrize(
    ("checkpoint", "wrong", "message"), MISTAKES, ids=[m[1].__name__ for m in MISTAKES]
)
def test_each_plausible_wrong_answer_is_caught_with_a_message_that_names_it(
    checkpoint, wrong, message: str
) -> None:
    with pytest.raises(AssertionError) as caught:
        check(checkpoint, wrong)
    assert message in str(caught.value)


def test_every_checkpoint_is_shown_to_catch_a_wrong_answer() -> None:
    assert {m[0] for m in MISTAKES} == set(EXERCISES)


def test_a_failed_checkpoint_raises_one_sentence_that_jupyter_shows_without_a_traceback() -> (  # noqa: E501  (the test's name)
    None
):
    failed = "^Checkpoint failed: rnn_step matches nn.RNNCell without its bias"
    with pytest.raises(AssertionError, match=failed) as info:
        labs.run_checkpoint(EXERCISES["checkpoint_rnn_step"].checkpoint, rnn_no_bias)
    assert isinstance(info.value, labs.CheckpointError)
    assert info.value._render_traceback_() == [f"CheckpointError: {info.value}"]
    assert info.value.__cause__ is None and info.value.__suppress_context__  # noqa: PT018 - one sentence, no chain


def test_an_unwritten_exercise_stops_the_notebook_as_a_failure_a_grader_counts() -> (
    None
):
    def stub(*args):
        raise NotImplementedError("Lab 1, exercise 1 is not written yet")

    with pytest.raises(
        AssertionError,
        match="^Checkpoint not passed yet. Lab 1, exercise 1 is not written yet$",
    ):
        labs.run_checkpoint(EXERCISES["checkpoint_rnn_step"].checkpoint, stub)


def test_the_summed_loss_is_named_a_sum_once_perplexity_passes() -> None:
    def summed_but_right_perplexity(logits, targets):
        loss, _, bits = lm_summed(logits, targets)
        mean = loss.item() / targets.numel()
        return loss, math.exp(mean), mean / math.log(2)

    with pytest.raises(
        AssertionError, match="a sum: divide by the number of positions"
    ):
        check("checkpoint_lm_loss_and_ppl", summed_but_right_perplexity)


# ---- an autograder's view (issue 54)
# -----------------------------------------------------------------------


def _score(nb, grading) -> tuple[int, int]:
    """(points earned, points possible): what an error-based grader gives ``nb`` under
    the instructor edition's grading metadata (cells matched by id): a graded cell earns
    its points when it ran without an error."""
    earned = possible = 0
    for cell in nb.cells:
        meta = grading.get(cell.get("id"), {})
        if meta.get("grade"):
            possible += meta["points"]
            earned += meta["points"] * (
                not [o for o in cell.get("outputs", []) if o.output_type == "error"]
            )
    return earned, possible


@pytest.mark.xdist_group("labs-executed")
def test_an_autograder_gives_the_student_edition_zero_and_the_solution_edition_full_marks(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    lab = LABS[0]
    instructor = labs.notebook(lab, "instructor")
    grading = {
        c["id"]: c.metadata["nbgrader"]
        for c in instructor.cells
        if "nbgrader" in c.metadata
    }
    assert sum(m.get("points", 0) for m in grading.values()) == len(lab.exercises)
    assert sum(m["solution"] for m in grading.values()) == len(lab.exercises)
    assert all(m["locked"] != m["solution"] for m in grading.values())
    # nbgrader's markers
    assert sum(labs.BEGIN in c.source for c in instructor.cells) == len(lab.exercises)
    scores = {}
    for edition in ("student", "solution"):
        nb = labs.notebook(lab, edition)
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(tmp_path)}},
        ).execute()
        scores[edition] = _score(nb, grading)
    assert scores == {
        "student": (0, len(lab.exercises)),
        "solution": (len(lab.exercises), len(lab.exercises)),
    }


def test_the_instructor_edition_is_written_beside_the_two_others(
    tmp_path: Path,
) -> None:
    written = {p.name for p in labs.write_labs(tmp_path, LABS[:1])}
    slug = LABS[0].slug
    assert {
        f"{slug}-student.ipynb",
        f"{slug}-solution.ipynb",
        f"{slug}-instructor.ipynb",
        "labs-instructor.zip",
    } <= written


def test_a_notebook_names_what_to_install_and_the_versions_it_was_tested_with() -> None:
    import subprocess
    import sys

    nb = labs.notebook(LABS[0], "student")
    assert "`pip install torch numpy`" in nb.cells[0].source
    assert (
        f"the book tests this notebook with {labs.pinned_versions()}"
        in nb.cells[0].source
    )
    assert labs.pinned_versions().startswith("torch 2.")
    assert nb.cells[1].source.startswith(
        labs.REQUIREMENTS_CHECK.format(packages="torch numpy")
    )
    # without NumPy the first cell stops with the command that installs it, before
    # PyTorch's own warning
    check = labs.REQUIREMENTS_CHECK.format(packages="torch numpy")
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\nsys.modules['numpy'] = None\n{check}"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert "This lab needs NumPy beside PyTorch: pip install torch numpy" in done.stderr


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_student_edition_holds_no_answer_anywhere_docstrings_included(
    lab: labs.Lab,
) -> None:
    """No cell of the student notebook (a stub's docstring, a helper, a hint, a message)
    holds a solution line's expression, compared as a reader copies it: whitespace,
    ``torch.`` and the product sign do not count, so a docstring's ``(a1 a2, a2 b1 +
    b2)`` is the code ``a1 * a2, a2 * b1 + b2``."""
    text = _code_key(
        "\n".join(cell.source for cell in labs.notebook(lab, "student").cells)
    ).replace("*", "")
    for exercise in lab.exercises:
        for line in _solution_lines(exercise):
            right = re.split(r"^return\s|(?<![=!<>])=(?!=)", line, maxsplit=1)[-1]
            key = _code_key(right).replace("*", "")
            computes = re.search(r"[-+*/@]", right) and all(
                right.count(a) == right.count(b) for a, b in PAIRS
            )
            if (
                computes
                and len(key) >= 10
                and not re.match(r"(for|if|while|with)\s", line)
            ):
                assert key not in text, (
                    f"{exercise.target}: the student notebook holds the answer's "
                    f"{right!r}"
                )


#: brackets that must balance for a solution line's expression to stand alone (a
#: continuation line's does not)
PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))


# ---- the exercises beyond the page, budgets, prediction, stretch, results, launch link
# (issue 54) ------------


def _shown_on_page(lab: labs.Lab) -> set[str]:
    """The names the lab's chapter page shows as listings (``:pyobject:``)."""
    page = (labs.ROOT / f"{lab.chapter}.md").read_text(encoding="utf-8")
    return set(re.findall(r"^:pyobject:\s*(\S+)\s*$", page, flags=re.M))


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_every_lab_asks_for_something_its_chapter_page_does_not_show(
    lab: labs.Lab,
) -> None:
    """At least one exercise per lab writes a function the page shows no listing of, and
    no line of that solution is on the page or anywhere in the student notebook
    (comments and short lines aside)."""
    page = _code_key((labs.ROOT / f"{lab.chapter}.md").read_text(encoding="utf-8"))
    beyond = [
        ex
        for ex in lab.exercises
        if ex.target.partition(":")[2] not in _shown_on_page(lab)
    ]
    assert beyond, (
        f"{lab.slug}: every exercise's function is a listing on {lab.chapter}.md"
    )
    student = _code_key(
        "\n".join(c.source for c in labs.notebook(lab, "student").cells)
    )
    for exercise in beyond:
        for line in _solution_lines(exercise):
            assert _code_key(line) not in page, (
                f"{exercise.target}: {line!r} is on the page"
            )
            assert _code_key(line) not in student, (
                f"{exercise.target}: {line!r} is in the student notebook"
            )


def test_the_mistakes_of_one_exercise_get_distinct_messages() -> None:
    said: dict[str, list[str]] = {}
    for checkpoint, wrong, _ in MISTAKES:
        with pytest.raises(AssertionError) as caught:
            check(checkpoint, wrong)
        said.setdefault(checkpoint, []).append(
            str(caught.value).split(":")[0] + str(caught.value)[-40:]
        )
    for checkpoint in (
        "checkpoint_masked_mean_state",
        "checkpoint_clip_gradient_values",
        "checkpoint_linear_recurrence_grad",
    ):
        assert len(set(said[checkpoint])) == len(said[checkpoint]) >= 3, said[
            checkpoint
        ]


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_each_lab_states_its_budget_per_exercise_and_in_all_with_the_run_times_measured(
    lab: labs.Lab,
) -> None:
    """Writing time an estimate (said so), running time the measured one in
    ``labs/timings.json``; both per exercise, in the introduction's table and under each
    exercise's heading, and in all."""
    timings = labs.load_timings()
    measured = timings["labs"][lab.slug]
    assert len(measured["exercises"]) == len(lab.exercises), (
        "run `python -m bookbuild.tools.labs --time`"
    )
    assert measured["total"] == pytest.approx(
        measured["setup"] + sum(measured["exercises"]) + measured["after"], abs=0.01
    )
    nb = labs.notebook(lab, "student")
    intro = nb.cells[0].source
    assert "**Time budget.**" in intro
    assert "estimate" in intro
    assert timings["machine"] in intro
    assert f"torch {timings['torch']}" in intro
    for number, exercise in enumerate(lab.exercises, start=1):
        seconds = labs._seconds(measured["exercises"][number - 1])
        name = exercise.target.partition(":")[2]
        assert (
            f"| exercise {number}, `{name}` | about {exercise.minutes} min | "
            f"{seconds} |" in intro
        )
        heading = next(
            c.source for c in nb.cells if c.source.startswith(f"## Exercise {number}:")
        )
        assert (
            f"about {exercise.minutes} minutes of writing (estimate); its "
            f"cells ran in {seconds}" in heading
        )
    total = sum(e.minutes for e in lab.exercises) + 10
    assert (
        f"| **in all** | **about {total} min** | "
        f"**{labs._seconds(measured['total'])}** |" in intro
    )


def test_a_budget_without_a_measurement_says_so() -> None:
    lab = LABS[0]
    assert "not measured yet" in labs.budget(lab, {})
    stale = {
        "machine": "m",
        "torch": "t",
        "python": "p",
        "labs": {
            lab.slug: {"setup": 1.0, "exercises": [1.0], "after": 1.0, "total": 3.0}
        },
    }
    # measured before exercises were added
    assert "not measured yet" in labs.budget(lab, stale)
    assert labs.exercise_budget(lab, 1, stale).endswith("(estimate).*")
    assert labs._seconds(0.004) == "under 0.01 s"
    assert labs._seconds(1.234) == "1.23 s"


@pytest.mark.xdist_group("labs-executed")
@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_stated_run_time_holds_within_its_factor(lab: labs.Lab, executed) -> None:
    """The solution edition, run here (its kernel already warm from the earlier
    notebooks), takes at most RUN_TIME_FACTOR times the stated run time plus
    RUN_TIME_SLACK_S: the statement is a measurement, not a wish."""
    stated = labs.load_timings()["labs"][lab.slug]["total"]
    ran = executed[(lab.slug, "solution", "seconds")]
    assert 0 < ran <= labs.RUN_TIME_FACTOR * stated + labs.RUN_TIME_SLACK_S, (
        ran,
        stated,
    )


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_after_the_last_checkpoint_come_a_prediction_a_stretch_and_the_results_table_last(  # noqa: E501  (the test's name)
    lab: labs.Lab,
) -> None:
    assert lab.prediction is not None
    assert len(lab.stretch) >= 2
    assert lab.results
    for edition in ("student", "solution", "instructor"):
        nb = labs.notebook(lab, edition)
        sources = [c.source for c in nb.cells]
        last_check = max(
            i for i, s in enumerate(sources) if "run_checkpoint(checkpoint_" in s
        )
        part = {
            c.metadata["lab_part"]: i
            for i, c in enumerate(nb.cells)
            if "lab_part" in c.metadata
        }
        ask = next(
            i for i, s in enumerate(sources) if s.startswith("## Predict, then measure")
        )
        stretch = next(
            i for i, s in enumerate(sources) if s.startswith("## Stretch (optional)")
        )
        assert (
            last_check
            < ask
            < part["prediction"]
            < part["measure"]
            < part["compare"]
            < stretch
            < part["results"]
            == len(nb.cells) - 1
        )
        assert nb.cells[ask].cell_type == nb.cells[stretch].cell_type == "markdown"
        assert "before" in sources[ask]
        assert "= None" in sources[part["prediction"]]
        # the student's own, ungraded
        assert all("nbgrader" not in nb.cells[i].metadata for i in part.values())
        assert sources[stretch].count("\n1. ") == 1
        assert "No checkpoint" in sources[stretch]
    names = [ex.target.partition(":")[2] for ex in lab.exercises]
    measure = lab.prediction.measure + lab.prediction.guess
    # called or passed, not assigned
    uses = [re.compile(rf"\b{n}\b(?!\s*=)") for n in names]
    assert any(u.search(measure) for u in uses), (
        "the prediction is measured with the student's functions"
    )
    assert any(u.search(lab.results) for u in uses), (
        "the results table comes from the student's functions"
    )


@pytest.mark.xdist_group("labs-executed")
@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_solution_edition_compares_the_guess_and_ends_with_a_table(
    lab: labs.Lab, executed
) -> None:
    parts = executed[(lab.slug, "solution", "parts")]
    assert "you guessed None" in parts["compare"]
    rows = [line.split() for line in parts["results"].strip().splitlines()]
    assert len(rows) >= 4, parts["results"]  # a heading and at least three rows
    # every row has as many cells
    assert len({len(row) for row in rows[1:]}) == 1, parts["results"]


def test_a_launch_link_to_a_hosted_notebook_sits_beside_each_student_download() -> None:
    from docutils import nodes
    from docutils.utils import new_document
    from sphinx import addnodes

    doc = new_document("recurrence")
    section = nodes.section()
    offer = nodes.paragraph()
    for edition in ("student", "solution"):
        offer += addnodes.download_reference(
            "", "", reftarget=f"../_build/labs/recurrence-{edition}.ipynb"
        )
    offer += addnodes.download_reference(
        "", "", reftarget="../_build/labs/labs-student.zip"
    )
    solutions_only = nodes.paragraph()
    solutions_only += addnodes.download_reference(
        "", "", reftarget="../_build/labs/gated-solution.ipynb"
    )
    section += [offer, solutions_only]
    doc += section
    labs.launch_links(doc)
    assert [p is offer or p is solutions_only for p in section.children] == [
        True,
        False,
        True,
    ]
    launch = section.children[1]
    assert "lab-launch" in launch["classes"]
    links = list(launch.findall(nodes.reference))
    assert [(link["refuri"], link.astext()) for link in links] == [
        (labs.LAUNCH_URL, "Google Colab")
    ]
    text = launch.astext()
    assert "choose Upload in its Open notebook window" in text
    assert "recurrence-student.ipynb" in text
    labs.launch_links(doc)  # once per download paragraph, however often it runs
    assert len(section.children) == 3


def test_the_launch_links_are_made_by_the_sphinx_extension() -> None:
    connected = []

    class App:
        def connect(self, event, handler):
            connected.append((event, handler.__name__))

    labs.setup(App())
    assert ("doctree-read", "_launch_links") in connected


def test_the_launch_link_reaches_the_html_beside_the_download(tmp_path: Path) -> None:
    """A page written as the chapters write their lab section, rendered by Sphinx with
    MyST and the labs' launch links: the HTML holds the download, then the paragraph
    with the hosted service's link."""
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    (src / "_build" / "labs").mkdir(parents=True)
    (src / "_build" / "labs" / "recurrence-student.ipynb").write_text("{}")
    (src / "conf.py").write_text(
        "extensions = ['myst_parser']\nexclude_patterns = ['_build']\n"
        "def setup(app):\n    from bookbuild.tools import labs\n"
        "    app.connect('doctree-read', labs._launch_links)\n"
    )
    (src / "index.md").write_text(
        "# Lab\n\nNotebooks to download: the {download}`student edition "
        "<_build/labs/recurrence-student.ipynb>`.\n\n"
        "What follows.\n"
    )
    out = tmp_path / "html"
    app = Sphinx(
        str(src),
        str(src),
        str(out),
        str(tmp_path / "doctrees"),
        "html",
        status=None,
        warning=None,
        freshenv=True,
    )
    app.build()
    html = (out / "index.html").read_text(encoding="utf-8")
    download = html.index("recurrence-student.ipynb")
    launch = html.index(f'href="{labs.LAUNCH_URL}"')
    assert download < launch < html.index("What follows.")
    assert 'class="lab-launch"' in html
    assert "choose Upload in its Open notebook window" in html


def _computing_keys(exercise: labs.Exercise) -> list[tuple[str, str]]:
    """(key, expression) of each solution line that computes something, compared as a
    reader copies it."""
    found = []
    for line in _solution_lines(exercise):
        right = re.split(r"^return\s|(?<![=!<>])=(?!=)", line, maxsplit=1)[-1]
        key = _code_key(right).replace("*", "")
        computes = re.search(r"[-+*/@]", right) and all(
            right.count(a) == right.count(b) for a, b in PAIRS
        )
        if computes and len(key) >= 10 and not re.match(r"(for|if|while|with)\s", line):
            found.append((key, right))
    return found


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_no_student_notebook_holds_the_answer_of_another_lab_s_exercise(
    lab: labs.Lab,
) -> None:
    """Lab 6 scores with Lab 4's lm_loss_and_ppl: its student edition shows a stand-in,
    not Lab 4's answer."""
    text = _code_key(
        "\n".join(cell.source for cell in labs.notebook(lab, "student").cells)
    ).replace("*", "")
    for other in LABS:
        for exercise in other.exercises:
            for key, right in _computing_keys(exercise):
                assert key not in text, (
                    f"{lab.slug}'s student notebook holds {exercise.target}'s {right!r}"
                )


def test_a_stand_in_computes_what_the_answer_it_replaces_computes() -> None:
    lab = next(lab for lab in LABS if lab.slug == "depth")
    cell = next(
        c.source
        for c in labs.notebook(lab, "student").cells
        if "def lm_loss_and_ppl" in c.source
    )
    assert "given: Lab 4 asks you to write this one" in cell
    space: dict = {}
    # the set-up cell: imports
    exec(labs.notebook(lab, "student").cells[1].source, space)
    exec(
        cell.split("\n\n\ndef prefix_only_loss")[0].split("@torch.no_grad()")[0], space
    )
    gen = torch.Generator().manual_seed(5)
    logits, targets = (
        torch.randn(3, 4, 7, generator=gen),
        torch.randint(0, 7, (3, 4), generator=gen),
    )
    got, want = (
        space["lm_loss_and_ppl"](logits, targets),
        lm_loss_and_ppl(logits, targets),
    )
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == pytest.approx(want[1:], rel=1e-6)


def test_a_context_that_is_another_exercise_s_answer_needs_a_stand_in() -> None:
    exercise = labs.Exercise(
        "chapter_code.depth.layers:prefix_only_loss",
        "task",
        ("nudge", "idea"),
        print,
        context=("chapter_code.lm.perplexity:lm_loss_and_ppl",),
    )
    with pytest.raises(
        labs.LabError, match="is another exercise's answer; give a stand-in"
    ):
        labs._context_source(exercise.context[0], exercise, "student")
    assert labs.BEGIN not in labs._context_source(
        exercise.context[0], exercise, "solution"
    )


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_a_notebook_imports_only_the_packages_its_first_cell_names_and_the_standard_library(  # noqa: E501  (the test's name)
    lab,
) -> None:
    import ast
    import sys

    for edition in ("student", "solution"):
        for cell in labs.notebook(lab, edition).cells:
            if cell.cell_type != "code":
                continue
            for node in ast.walk(ast.parse(cell.source)):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module]
                    if isinstance(node, ast.ImportFrom) and node.module
                    else []
                )
                for name in names:
                    top = name.split(".")[0]
                    assert top in lab.requirements or top in sys.stdlib_module_names, (
                        lab.slug,
                        name,
                    )
