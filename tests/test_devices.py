"""Every trainer, evaluator and sampler computes where its model is (issue 55).

Each test runs one small step of a function of ``chapter_code`` with its model on
PyTorch's ``meta`` device under :class:`tests.devices.DeviceAudit`, which records
every operation that mixes devices (what a GPU refuses), and then checks that the
values handed back for printing and plotting are on the CPU. A function that builds
its own model is given ``device="meta"``; one that is handed a model gets one on
``meta``. Data, weights and random draws stay on the CPU before they move, so the
CPU edition's numbers are those the book had before the functions took a device
(checked by the package tests, which compare with stored and reference values).
"""

from __future__ import annotations

import pytest
import torch

from chapter_code.beyond import authorship, parallel_recall, seq2seq, translator
from chapter_code.beyond import scratch_classifier as scratch
from chapter_code.bptt import clipping, truncation
from chapter_code.corpora.texts import Splits
from chapter_code.depth import gru_ablation, layers, residual, scoreboard
from chapter_code.depth import word_lm as wordlm
from chapter_code.gated import memory_grid, memory_task
from chapter_code.lm import char_lm, char_models, comparison, gate_stats
from chapter_code.lm.char_lm import CharLM, TrainConfig
from chapter_code.rnn import recurrence
from chapter_code.sampling import metrics, rules, study
from tests.devices import META, DeviceAudit, off_device_tensors

TEXT = "to be or not to be, that is the question. " * 40
TINY_TRAIN = TrainConfig(window=8, batch_size=4, steps=2, lr=1e-2, log_every=1)
RECALL = memory_task.RecallConfig(lag=5, n_train=32, n_test=16, epochs=1, batch_size=16)
#: the sizes of a tiny character model, shared by the depth, scoreboard and ablation
#: recipes
TINY_LM = {
    "train_chars": 1000,
    "valid_chars": 200,
    "embedding_size": 4,
    "hidden_size": 8,
    "train": TINY_TRAIN,
}


def audited(fn, *args, loss: bool = False, **kwargs):  # noqa: ANN001, ANN201
    """``fn(*args, **kwargs)`` under the audit; fail naming every mixed call, and every
    tensor handed back off the CPU (except a ``loss`` to differentiate, which stays
    with its model).
    """
    with DeviceAudit() as audit:
        result = fn(*args, **kwargs)
    mixed = [f"{m.op} on {'+'.join(m.devices)} at {m.where}" for m in audit.mixed]
    assert mixed == [], "operations that mix devices:\n" + "\n".join(mixed)
    if loss:
        assert result.device == META
        return result
    off = off_device_tensors(result)
    assert off == [], "handed back off the CPU: " + "; ".join(off)
    return result


def on_meta(model: torch.nn.Module) -> torch.nn.Module:
    return model.to(META)


def _splits(monkeypatch: pytest.MonkeyPatch, *modules) -> None:  # noqa: ANN002
    for module in modules:
        monkeypatch.setattr(
            module,
            "corpus_splits",
            lambda corpus: Splits(TEXT[:1200], TEXT[1200:1500], TEXT[1500:]),
        )


# ---- trainers that build their model: they take the device ------------------------


@pytest.mark.parametrize("contender", memory_task.CONTENDERS[:3], ids=lambda c: c.cell)
def test_train_recall(contender: memory_task.Contender) -> None:
    run, net = audited(memory_task.train_recall, contender, 0, RECALL, device=META)
    assert next(net.parameters()).device == META
    assert len(run.history) == 1


def test_train_recall_with_a_learned_initial_state() -> None:
    audited(
        memory_task.train_recall,
        memory_task.CONTENDERS[1],
        0,
        RECALL,
        learn_h0=True,
        device=META,
    )


def test_run_grid() -> None:
    runs = audited(
        memory_grid.run_grid, memory_task.CONTENDERS[:1], (0,), RECALL, device=META
    )
    assert len(runs) == 1


def test_trap_and_tagger_train_and_load(monkeypatch: pytest.MonkeyPatch) -> None:
    _splits(monkeypatch, layers)
    config = layers.TrapConfig(
        train_chars=300, embedding_size=4, hidden_size=6, train=TINY_TRAIN
    )
    for bidirectional in (False, True):
        result = audited(layers.train_directional, TEXT, config, bidirectional, META)
        model, _ = layers.load_directional(result, config, device=META)
        assert next(model.parameters()).device == META
        tagged = audited(layers.train_tagger, TEXT, config, bidirectional, device=META)
        tagger, vocab = layers.load_tagger(tagged, config, device=META)
        audited(layers.tag_accuracy_by_letter, tagger, vocab, TEXT[:200], 16)


def test_depth_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _splits(monkeypatch, residual)
    recipe = residual.DepthRecipe(**TINY_LM)
    audited(residual.depth_run, 0, 2, True, recipe, device=META)


@pytest.mark.parametrize(
    "contender", ["rnn", "lstm", "gru", "lstm-scratch", "lstm-no-forget"]
)
def test_score_run(monkeypatch: pytest.MonkeyPatch, contender: str) -> None:
    _splits(monkeypatch, scoreboard)
    recipe = scoreboard.ScoreRecipe(**TINY_LM)
    audited(scoreboard.score_run, 0, contender, recipe, device=META)


def test_ablation_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _splits(monkeypatch, gru_ablation)
    recipe = scoreboard.ScoreRecipe(**TINY_LM)
    audited(gru_ablation.ablation_run, 0, "update-only", recipe, device=META)


def test_word_lm_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    halves = {
        "shakespeare": TEXT[: len(TEXT) // 2] * 2,
        "milton": TEXT[len(TEXT) // 2 :] * 2,
    }
    monkeypatch.setattr(
        wordlm,
        "author_splits",
        lambda: {
            a: wordlm.split_at_lines(t.replace(". ", ".\n"), 0.8, 0.1)
            for a, t in halves.items()
        },
    )
    recipe = wordlm.WordRecipe(
        vocab_size=20,
        eval_every=2,
        train=TrainConfig(window=6, batch_size=4, steps=2, log_every=2),
    )
    out = audited(wordlm.word_lm_metrics, 0, 8, 1, recipe, META)
    assert out["device"] == "meta"


def test_train_char_lm_and_load() -> None:
    recipe = char_models.LMRecipe("lstm", 8, TINY_TRAIN, embedding_size=4, seed=3)
    result = audited(char_models.train_char_lm, "book-prose", recipe, device=META)
    model, _ = char_models.load_char_lm(result, device=META)
    assert next(model.parameters()).device == META


TEXTS = {"first": "abcd ab" * 60, "second": "dcba dc" * 70}


def test_authorship_trainers() -> None:
    config = authorship.AuthorshipConfig(
        lengths=(8, 16),
        block=50,
        cycle=3,
        embedding_size=4,
        hidden_size=8,
        steps=1,
        batch_size=4,
        n_test=4,
        orders=(1, 2),
        select_length=8,
    )
    audited(authorship.train_authorship, TEXTS, 0, config, device=META)
    audited(authorship.classify_shakespeare_milton, 0, config, device=META)


def test_input_gated_recall() -> None:
    audited(parallel_recall.train_input_gated_recall, 0, RECALL, device=META)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_scratch_classifier(cell: str) -> None:
    config = scratch.ScratchConfig(
        min_len=2,
        max_len=6,
        embedding_size=4,
        hidden_size=5,
        steps=1,
        batch_size=4,
        n_valid=4,
        block=20,
        cycle=4,
        probe_len=5,
    )
    audited(scratch.train_scratch_classifier, TEXTS, cell, 0, config, device=META)
    audited(scratch.scratch_shakespeare_milton, cell, 0, config, device=META)


@pytest.mark.parametrize("attention", [True, False])
def test_reversal(attention: bool) -> None:
    config = seq2seq.ReversalConfig(
        vocab=5,
        min_len=2,
        max_len=3,
        embedding_size=4,
        hidden_size=8,
        steps=1,
        batch_size=4,
        n_test=4,
    )
    audited(seq2seq.train_reversal, attention, 0, config, device=META)
    net = on_meta(seq2seq.Seq2Seq(5, 4, 8, attention=attention))
    audited(seq2seq.accuracy_by_length, net, config)


@pytest.mark.parametrize("cell", ["rnn", "gru"])
def test_translator(cell: str) -> None:
    config = translator.TranslatorConfig(
        vocab=5,
        min_len=2,
        max_len=4,
        buckets=((2, 3), (4, 4)),
        embedding_size=4,
        hidden_size=8,
        steps=1,
        batch_size=4,
        n_test=2,
    )
    audited(translator.train_translator, cell, 0, config, device=META)


# ---- functions handed a model: they follow the model's device ----------------------


def test_clipping_trainers() -> None:
    gen = torch.Generator().manual_seed(0)
    batches = clipping.markov_stream(6, 5, 4, gen).reshape(3, 2, 5)
    for kappa in (None, 1.0):
        model = on_meta(recurrence.NextTokenRNN(4, 8, learn_h0=False))
        audited(clipping.train_sgd, model, batches, lr=0.1, kappa=kappa)
    x, y = clipping.recall_first_data(16, 5, 4, gen)
    for cell in ("rnn", "lstm"):
        net = on_meta(clipping.LastStepClassifier(cell, 4, 8, 4))
        audited(clipping.clipped_share, net, x, y, steps=2, kappa=1.0, generator=gen)


def test_next_token_training() -> None:
    gen = torch.Generator().manual_seed(0)
    tokens = recurrence.fixed_start_sequences(8, 5, 4, 0, gen)
    model = on_meta(recurrence.NextTokenRNN(4, 8, learn_h0=True))
    audited(recurrence.train_next_token, model, tokens, 2, 0.1, 4, gen)
    audited(recurrence.per_position_loss, model, tokens, loss=True)


def test_truncation_measurements() -> None:
    gen = torch.Generator().manual_seed(0)
    tokens, targets = truncation.echo_stream(2, 8, 4, 2, gen)
    for carry in (False, True):
        net = on_meta(truncation.EchoRNN(4, 8))
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        audited(truncation.run_chunks, net, tokens, targets, 4, carry, opt)
        audited(truncation.run_chunks, net, tokens, targets, 4, carry)
    rnn = on_meta(recurrence.ElmanRNN(2, 4))
    audited(truncation.reach_fraction_by_autograd, rnn, 2, 1)


def test_char_lm_trainer_and_scores() -> None:
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 6, (80,), generator=gen)
    model = on_meta(CharLM(6, "lstm", 4, 8))
    audited(char_lm.fit_next_token, model, ids, TINY_TRAIN, gen)
    audited(char_lm.fixed_window_loss, model, ids, 8)
    audited(char_lm.streaming_loss, model, ids, 8)
    audited(char_lm.gradient_reach, model, ids, 8, 2, gen)
    audited(comparison.fixed_window_logits, model, ids[:21], 8)
    audited(comparison.loss_by_position, model, ids, 8)
    audited(gate_stats.forget_gates, model, ids[:16].reshape(2, 8))
    audited(layers.prefix_only_loss, model, ids, 8, 4)


def test_samplers_and_sample_scores() -> None:
    model = on_meta(CharLM(6, "gru", 4, 8))
    prefix = torch.tensor([1, 2, 3])
    for rule in (rules.greedy, rules.temperature_rule(0.8), rules.top_k_rule(3)):
        audited(rules.generate, model, prefix, 4, rule, torch.Generator())
        audited(layers.generate_rereading, model, prefix, 3, rule, torch.Generator(), 4)
    tokens = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
    audited(metrics.token_log_probs, model, prefix, tokens)
    audited(metrics.mean_log_prob, model, prefix, tokens)
    loop = metrics.find_loop("ababababab")
    assert loop is not None
    audited(metrics.loop_drift, model, prefix, tokens, loop)
    vocab = char_lm.Vocab("abcdef")
    out = audited(study.greedy_loop, model, vocab, "abc", 12, "aaaa")
    assert out["loop"] is not None


def test_forget_gate_trace_replays_where_the_lstm_is() -> None:
    lstm = on_meta(torch.nn.LSTM(3, 4, batch_first=True))
    x, _ = memory_task.make_recall(2, 5, 3, seed=0)
    audited(memory_task.forget_gate_trace, lstm, x)


# ---- the audit itself ---------------------------------------------------------------


def test_the_audit_finds_a_batch_left_on_the_cpu() -> None:
    """A model on ``meta`` fed CPU ids: PyTorch's embedding accepts it on ``meta``, a
    GPU would not, and the audit must say so.
    """
    model = on_meta(CharLM(6, "rnn", 4, 8))
    with DeviceAudit() as audit:
        model(torch.tensor([[1, 2, 3]]))
    assert [(m.op, m.devices) for m in audit.mixed][:1] == [
        ("embedding", ("cpu", "meta"))
    ]
    with DeviceAudit() as audit:
        model(torch.tensor([[1, 2, 3]], device=META))
        torch.ones(3, device=META) * torch.tensor(2.0)  # a CPU scalar may go along
    assert audit.mixed == []


def test_the_audit_reads_numbers_as_ones_on_the_cpu() -> None:
    with DeviceAudit():
        t = torch.zeros(2, 3, device=META)
        assert t.sum().item() == 1.0
        assert t.cpu().device.type == "cpu"
        assert t.to("cpu", copy=True).shape == (2, 3)
        assert t.tolist() == [[1.0] * 3] * 2
    assert off_device_tensors({"a": [t]}) == ["result['a'][0] on meta"]


def test_a_model_without_parameters_computes_on_the_cpu() -> None:
    from chapter_code.core.device import model_device, resolve_device

    assert model_device(torch.nn.Identity()) == torch.device("cpu")
    assert model_device(on_meta(torch.nn.Linear(2, 3))) == META
    assert resolve_device("meta") == META
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
