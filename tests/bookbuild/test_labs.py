"""The labs: solution notebooks pass every checkpoint, student notebooks stop at their first stub, and
each checkpoint catches the typical mistakes it is written for."""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import pytest
import torch
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from bookbuild import files, labs
from labs import lab1_recurrence, lab2_gradients, lab3_gated, lab4_language_models, lab5_generating

LABS = labs.load_labs()


def run(nb: nbformat.NotebookNode, tmp_path: Path) -> nbformat.NotebookNode:
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_solution_edition_passes_every_checkpoint(lab: labs.Lab, tmp_path: Path) -> None:
    nb = run(labs.notebook(lab, "solution"), tmp_path)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert printed.count("Checkpoint passed") == len(lab.exercises)
    assert sum(labs.BEGIN in c.source for c in nb.cells) == len(lab.exercises)  # nbgrader's markers kept


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_the_student_edition_stops_at_its_first_stub_with_the_stub_message(lab: labs.Lab, tmp_path: Path) -> None:
    nb = labs.notebook(lab, "student")
    with pytest.raises(CellExecutionError) as failed:
        run(nb, tmp_path)
    assert failed.value.ename == "NotImplementedError"
    assert labs.stub_message(lab, 1, lab.exercises[0]) in str(failed.value)
    code = [c for c in nb.cells if c.cell_type == "code"]
    first_check = next(i for i, c in enumerate(code) if c.source.startswith("def checkpoint_"))
    assert all(c.get("outputs") == [] for c in code[first_check + 1 :])  # nothing ran after the stub


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.slug)
def test_notebooks_stand_alone(lab: labs.Lab) -> None:
    for edition in ("student", "solution"):
        nb = labs.notebook(lab, edition)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert "chapter_code" not in cell.source
                assert "bookbuild" not in cell.source
        assert f"pip install {' '.join(lab.requirements)}" in nb.cells[0].source
    student = nbformat.writes(labs.notebook(lab, "student"))
    assert "YOUR CODE HERE" in student
    assert labs.BEGIN not in student


def test_written_notebooks_are_byte_stable(tmp_path: Path) -> None:
    first = {p.name: p.read_bytes() for p in labs.write_labs(tmp_path / "a")}
    second = {p.name: p.read_bytes() for p in labs.write_labs(tmp_path / "b")}
    assert first == second
    assert len(first) == 2 * len(LABS)


def test_markers_change_no_key_and_no_listing(tmp_path: Path) -> None:
    plain = "def f(x):\n    return x + 1\n"
    marked = "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION\n"
    (tmp_path / "a.py").write_text(plain)
    (tmp_path / "b.py").write_text(marked)
    (tmp_path / "c.txt").write_text(marked)
    assert files.code_bytes(tmp_path / "a.py") == files.code_bytes(tmp_path / "b.py") == plain.encode()
    assert files.code_bytes(tmp_path / "c.txt") == marked.encode()  # only Python sources
    assert labs.hide_markers(marked) == plain


def test_a_target_without_a_region_is_a_named_error() -> None:
    with pytest.raises(labs.LabError, match="chapter_code.rnn.recurrence:rnn_loop: expected one"):
        labs.solution_source("chapter_code.rnn.recurrence:rnn_loop")
    with pytest.raises(labs.LabError, match="no top-level function or class 'nothing'"):
        labs.solution_source("chapter_code.rnn.recurrence:nothing")
    with pytest.raises(labs.LabError, match="'module:name'"):
        labs.solution_source("chapter_code.rnn.recurrence")


# --------------------------------------------------------------------------- typical mistakes


def rnn_no_tanh(x_t, h_prev, weight_ih, weight_hh, bias):
    return x_t @ weight_ih.T + h_prev @ weight_hh.T + bias


def rnn_no_transpose(x_t, h_prev, weight_ih, weight_hh, bias):
    return torch.tanh(x_t @ weight_ih + h_prev @ weight_hh + bias)


def rnn_no_bias(x_t, h_prev, weight_ih, weight_hh, bias):
    return torch.tanh(x_t @ weight_ih.T + h_prev @ weight_hh.T)


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


def lstm_without_input_gate(x_t, h_prev, c_prev, weight_ih, weight_hh, bias):
    i, f, g, o = lab_lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)
    c = f * c_prev + g
    return o * torch.tanh(c), c


def lstm_output_without_tanh(x_t, h_prev, c_prev, weight_ih, weight_hh, bias):
    i, f, g, o = lab_lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)
    c = f * c_prev + i * g
    return o * c, c


def lab_lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias):
    from chapter_code.gated.gates import lstm_gates

    return lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)


def lm_summed(logits, targets):
    log_probs = torch.log_softmax(logits.reshape(-1, logits.shape[-1]), dim=-1)
    loss = -log_probs.gather(1, targets.reshape(-1, 1)).sum()  # forgot to divide by the number of positions
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


def softmax_without_temperature(logits, temperature):
    return torch.softmax(logits, dim=-1)


def temperature_multiplied(logits, temperature):
    return torch.softmax(logits * temperature, dim=-1)


def top_k_not_renormalised(logits, k, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    kept = torch.zeros_like(probs).scatter(-1, logits.topk(k, dim=-1).indices, 1.0)
    return probs * kept


def nucleus_drops_the_crossing_token(logits, p, temperature=1.0):
    probs = torch.softmax(logits / temperature, dim=-1)
    order = logits.argsort(dim=-1, descending=True)
    sorted_probs = probs.gather(-1, order)
    keep = (sorted_probs.cumsum(dim=-1) < p).to(probs.dtype)  # stops one token early
    keep[..., 0] = 1.0
    kept = torch.zeros_like(probs).scatter(-1, order, keep)
    return probs * kept / (probs * kept).sum(dim=-1, keepdim=True)


MISTAKES = [
    (lab1_recurrence.checkpoint_rnn_step, rnn_no_tanh, "because of the tanh"),
    (lab1_recurrence.checkpoint_rnn_step, rnn_no_transpose, "x_t @ weight_ih.T"),
    (lab1_recurrence.checkpoint_rnn_step, rnn_no_bias, "differs from nn.RNNCell"),
    (lab2_gradients.checkpoint_clip_gradients, clip_per_parameter, "not one per parameter"),
    (lab2_gradients.checkpoint_clip_gradients, clip_returns_the_clipped_norm, "norm before clipping, 5.0"),
    (lab2_gradients.checkpoint_clip_gradients, clip_always_rescales, "below kappa (1.0) must not change"),
    (lab3_gated.checkpoint_lstm_cell_step, lstm_without_input_gate, "c_t differs"),
    (lab3_gated.checkpoint_lstm_cell_step, lstm_output_without_tanh, "the output is o * tanh(c_t)"),
    (lab4_language_models.checkpoint_lm_loss_and_ppl, lm_summed, "perplexity of equal logits should be 65"),
    (lab4_language_models.checkpoint_lm_loss_and_ppl, lm_bits_in_nats, "divided by ln 2"),
    (lab4_language_models.checkpoint_lm_loss_and_ppl, lm_detached, "should be a tensor"),
    (lab4_language_models.checkpoint_lm_loss_and_ppl, lm_base_two_perplexity, "perplexity of equal logits"),
    (lab5_generating.checkpoint_temperature_probs, softmax_without_temperature, "divide the logits by the temperature"),
    (lab5_generating.checkpoint_temperature_probs, temperature_multiplied, "at temperature 0.5"),
    (lab5_generating.checkpoint_top_k_probs, top_k_not_renormalised, "should sum to 1 (renormalise)"),
    (lab5_generating.checkpoint_nucleus_probs, nucleus_drops_the_crossing_token, "your function kept 1"),
]


@pytest.mark.parametrize(("checkpoint", "wrong", "message"), MISTAKES, ids=[m[1].__name__ for m in MISTAKES])
def test_each_typical_mistake_is_caught_with_a_message_that_names_it(checkpoint, wrong, message: str) -> None:
    with pytest.raises(AssertionError) as caught:
        checkpoint(wrong)
    assert message in str(caught.value)


def test_the_summed_loss_is_named_a_sum_once_perplexity_passes() -> None:
    def summed_but_right_perplexity(logits, targets):
        loss, _, bits = lm_summed(logits, targets)
        mean = loss.item() / targets.numel()
        return loss, math.exp(mean), mean / math.log(2)

    with pytest.raises(AssertionError, match="a sum: divide by the number of positions"):
        lab4_language_models.checkpoint_lm_loss_and_ppl(summed_but_right_perplexity)


def test_the_book_s_own_functions_pass_their_checkpoints(capsys: pytest.CaptureFixture[str]) -> None:
    from chapter_code.bptt.clipping import clip_gradients
    from chapter_code.gated.gates import lstm_cell_step
    from chapter_code.lm.perplexity import lm_loss_and_ppl
    from chapter_code.rnn.recurrence import rnn_step
    from chapter_code.sampling.rules import nucleus_probs, temperature_probs, top_k_probs

    for checkpoint, fn in [(lab1_recurrence.checkpoint_rnn_step, rnn_step),
                           (lab2_gradients.checkpoint_clip_gradients, clip_gradients),
                           (lab3_gated.checkpoint_lstm_cell_step, lstm_cell_step),
                           (lab4_language_models.checkpoint_lm_loss_and_ppl, lm_loss_and_ppl),
                           (lab5_generating.checkpoint_temperature_probs, temperature_probs),
                           (lab5_generating.checkpoint_top_k_probs, top_k_probs),
                           (lab5_generating.checkpoint_nucleus_probs, nucleus_probs)]:
        checkpoint(fn)
    assert capsys.readouterr().out.count("Checkpoint passed") == 7
