"""Tests for depth.word_lm: tokens, the vocabulary, and a tiny job that picks its
checkpoint on validation."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from chapter_code.corpora.texts import Splits
from chapter_code.depth import word_lm as wordlm
from chapter_code.depth.word_lm import (
    UNK,
    WordLM,
    WordRecipe,
    WordVocab,
    split_at_lines,
    words,
)
from chapter_code.lm.char_lm import TrainConfig


def test_words() -> None:
    assert words("Thou art, I'll say; 'tis O'er!") == [
        "thou",
        "art",
        ",",
        "i'll",
        "say",
        ";",
        "'",
        "tis",
        "o'er",
        "!",
    ]


def test_vocab_ranks_and_unknown() -> None:
    vocab = WordVocab(["b", "a", "b", "c", "a", "b"], size=3)
    assert vocab.words == [UNK, "b", "a"]
    assert vocab.encode(["a", "c", "b"]).tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="size"):
        WordVocab(["a"], size=1)


def test_model_shapes() -> None:
    torch.manual_seed(0)
    logits, _ = WordLM(11, 6, 2, 0.1)(torch.randint(0, 11, (3, 5)))
    assert logits.shape == (3, 5, 11)


def test_split_at_lines_cuts_after_line_ends() -> None:
    text = "".join(f"line {i:02d}\n" for i in range(20))  # 20 lines of 8 characters
    parts = split_at_lines(text, 0.5, 0.25)
    assert parts.train + parts.valid + parts.test == text
    # 80 falls inside line 10: cut after it
    assert parts.train == "".join(f"line {i:02d}\n" for i in range(11))
    assert parts.valid.startswith("line 11\n")
    assert parts.test.startswith("line 16\n")
    assert parts.test.endswith("line 19\n")


@pytest.mark.parametrize(
    ("train", "valid", "match"),
    [
        (0, 0.1, "^train_share must be"),
        (1.0, 0.1, "^train_share must be"),
        (0.5, True, "^valid_share must be"),
        (0.5, "x", "^valid_share must be"),
        (0.05, 1.0, "^valid_share must be"),
        (0.6, 0.4, "below 1"),
    ],
)
def test_split_at_lines_rejects_bad_shares(
    train: object, valid: object, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        split_at_lines("a\nb\nc\nd\n", train, valid)  # type: ignore[arg-type]


def test_split_at_lines_edges() -> None:
    # the first cut lands on a newline at position 0
    parts = split_at_lines("\nab\ncd\nef\n", 0.05, 0.5)
    assert (parts.train, parts.valid, parts.test) == ("\n", "ab\ncd\n", "ef\n")
    with pytest.raises(ValueError, match="too few lines"):
        # both cuts after the same line: no validation text
        split_at_lines("aaaaaaaaa\nb\n", 0.1, 0.1)
    with pytest.raises(ValueError, match="too few lines"):
        # the second cut at the text's end: no test text
        split_at_lines("a\nb\nc\n", 0.3, 0.4)


def test_split_at_lines_needs_enough_lines() -> None:
    with pytest.raises(ValueError, match="too few lines"):
        split_at_lines("one long line without an end", 0.5, 0.25)
    with pytest.raises(ValueError, match="too few lines"):
        # the validation cut lands on the text's end
        split_at_lines("a\nb\n", 0.5, 0.25)


def _two_authors(monkeypatch: pytest.MonkeyPatch) -> None:
    bard = "the king is dead . long live the king ! " * 60
    milton = "\n".join(["of man's first disobedience and the fruit"] * 60) + "\n"
    monkeypatch.setattr(
        wordlm,
        "corpus_splits",
        lambda corpus: Splits(bard[:1600], bard[1600:2000], bard[2000:]),
    )
    monkeypatch.setattr(wordlm, "milton_text", lambda: milton)


def test_word_splits_hold_both_authors(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_authors(monkeypatch)
    vocab, ids = wordlm.word_splits(30)
    assert set(ids) == {"shakespeare", "milton"}
    # the vocabulary is taken from both authors' training text
    assert {"king", "disobedience"} <= set(vocab.words)
    for name in ("train", "valid", "test"):
        assert all(ids[a][name].numel() > 0 for a in ids)
        joined = wordlm.joined(ids, name)
        n = ids["shakespeare"][name].numel()
        assert torch.equal(joined[:n], ids["shakespeare"][name])
        assert torch.equal(joined[n:], ids["milton"][name])


def test_tiny_job_chooses_on_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_authors(monkeypatch)
    recipe = WordRecipe(
        vocab_size=20,
        eval_every=2,
        train=TrainConfig(window=6, batch_size=4, steps=6, log_every=2),
    )
    out = wordlm.word_lm_metrics(0, 8, 1, recipe)
    assert [s for s, _ in out["valid_curve"]] == [2, 4, 6]
    assert out["valid_nats"] == min(v for _, v in out["valid_curve"])
    assert out["best_step"] in (2, 4, 6)
    assert out["test_perplexity"] == pytest.approx(
        torch.tensor(out["test_nats"]).exp().item()
    )
    by_author = out["corpus_words_by_author"]
    assert {
        n: by_author["shakespeare"][n] + by_author["milton"][n]
        for n in by_author["milton"]
    } == out["corpus_words"]
    for author, nats in out["test_nats_by_author"].items():
        assert out["test_perplexity_by_author"][author] == pytest.approx(
            torch.tensor(nats).exp().item()
        )
        assert 0 <= out["unk_share_test_by_author"][author] <= 1


@pytest.mark.parametrize("bad", [1, 0, True, 2.5, "3"])
def test_vocab_size_checked(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^size must be an int >= 2"):
        WordVocab(["a", "b"], size=bad)  # type: ignore[arg-type]


def test_vocab_smallest_size_and_ties() -> None:
    assert WordVocab(["a"], size=2).encode([]).dtype == torch.long  # even for no words
    # one word besides <unk>: the most frequent
    vocab = WordVocab(["b", "a", "c", "c"], size=2)
    assert vocab.words == [UNK, "c"]
    assert len(vocab) == 2
    # equal counts: alphabetical
    assert WordVocab(["b", "a"], size=3).words == [UNK, "a", "b"]
    assert vocab.encode(["c", "zzz"]).dtype == torch.long


def test_model_dropout_only_between_layers() -> None:
    one, two = WordLM(11, 6, 1, 0.3), WordLM(11, 6, 2, 0.3)
    assert one.rnn.dropout == 0.0
    assert two.rnn.dropout == 0.3
    assert one.embed.embedding_dim == 6
    assert one.drop.p == 0.3
    tokens = torch.randint(0, 11, (2, 5))
    torch.manual_seed(0)
    one.train()
    # dropout on: two draws differ
    assert not torch.equal(one(tokens)[0], one(tokens)[0])
    one.eval()
    assert torch.equal(one(tokens)[0], one(tokens)[0])
    two.eval()
    with torch.no_grad():
        whole, _ = two(tokens)
        _, state = two(tokens[:, :3])
        rest, (h, _) = two(tokens[:, 3:], state)
    assert h.shape == (2, 2, 6)
    # the state passed in is continued
    assert torch.allclose(rest, whole[:, 3:], atol=1e-6)


def test_job_restores_the_best_checkpoint_before_the_test(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _two_authors(monkeypatch)
    # the second evaluation is the best; the third only ties it
    valid_scores = iter([3.0, 1.0, 1.0])
    calls = []

    def scripted(model, ids, window):
        calls.append((ids.numel(), model.readout.weight.detach().clone()))
        return next(valid_scores) if len(calls) <= 3 else 5.0 + 0.5 * (len(calls) - 4)

    monkeypatch.setattr(wordlm, "fixed_window_loss", scripted)
    recipe = WordRecipe(
        vocab_size=20,
        eval_every=2,
        train=TrainConfig(window=6, batch_size=4, steps=5, log_every=2),
    )
    out = wordlm.word_lm_metrics(0, 8, 1, recipe)
    assert out["valid_curve"] == [
        (2, 3.0),
        (4, 1.0),
        (5, 1.0),
    ]  # every eval_every steps, and the last step
    assert out["best_step"] == 4
    assert out["valid_nats"] == 1.0
    # three validations, then the joined test split and each author's
    assert len(calls) == 6
    for _, weights in calls[3:]:
        # the test is read with the best validation's weights
        assert torch.equal(weights, calls[1][1])
    assert not torch.equal(calls[1][1], calls[2][1])
    words, by_author = out["corpus_words"], out["corpus_words_by_author"]
    expected_sizes = (
        [words["valid"]] * 3
        + [words["test"]]
        + [by_author[a]["test"] for a in ("shakespeare", "milton")]
    )
    assert [n for n, _ in calls] == expected_sizes
    assert out["test_nats"] == 5.0
    assert out["test_nats_by_author"] == {"shakespeare": 5.5, "milton": 6.0}
    # the tiny corpus has fewer distinct words than 20
    n_words = len(wordlm.word_splits(20)[0])
    assert out["parameters"] == sum(
        p.numel() for p in WordLM(n_words, 8, 1, 0.2).parameters()
    )


def test_unknown_share_counts_unknown_test_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bard = "the king is dead . long live the king ! " * 60
    # every line's words are its own
    rare = [" ".join("q" * (i + 1) + c for c in "xyz") for i in range(10)]
    milton = "\n".join(["of man's first disobedience and the fruit"] * 50 + rare) + "\n"
    monkeypatch.setattr(
        wordlm,
        "corpus_splits",
        lambda corpus: Splits(bard[:1600], bard[1600:2000], bard[2000:]),
    )
    monkeypatch.setattr(wordlm, "milton_text", lambda: milton)
    recipe = WordRecipe(
        vocab_size=50,
        eval_every=1,
        train=TrainConfig(window=4, batch_size=2, steps=1, log_every=1),
    )
    out = wordlm.word_lm_metrics(0, 4, 1, recipe)
    assert out["unk_share_test_by_author"]["shakespeare"] == 0.0
    # Milton's test lines hold only words unseen in training
    assert out["unk_share_test_by_author"]["milton"] == 1.0
    expected = (
        out["corpus_words_by_author"]["milton"]["test"] / out["corpus_words"]["test"]
    )
    assert out["unk_share_test"] == pytest.approx(expected)


def test_job_reads_the_shakespeare_corpus_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _two_authors(monkeypatch)
    real = wordlm.corpus_splits
    asked = []
    monkeypatch.setattr(
        wordlm, "corpus_splits", lambda corpus: asked.append(corpus) or real(corpus)
    )
    assert set(wordlm.author_splits()) == {"shakespeare", "milton"}
    assert asked == ["shakespeare"]


def test_job_steps_rate_and_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_authors(monkeypatch)
    draws, rates = [], []
    real_windows, real_adam = wordlm.random_windows, torch.optim.Adam

    def windows(ids, window, batch, generator):
        draws.append(generator)
        return real_windows(ids, window, batch, generator)

    def adam(params, lr):
        rates.append(lr)
        return real_adam(params, lr=lr)

    monkeypatch.setattr(wordlm, "random_windows", windows)
    monkeypatch.setattr(torch.optim, "Adam", adam)
    recipe = WordRecipe(
        vocab_size=20,
        eval_every=2,
        train=TrainConfig(window=6, batch_size=4, steps=5, lr=0.05, log_every=2),
    )
    wordlm.word_lm_metrics(3, 8, 1, recipe)
    assert len(draws) == 5  # one batch per step, every step
    assert all(isinstance(g, torch.Generator) and g is draws[0] for g in draws)
    assert draws[0].initial_seed() == 3
    assert rates == [0.05]


def test_job_keeps_the_initial_weights_when_no_score_is_a_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _two_authors(monkeypatch)
    seen = []

    def scripted(model, ids, window):
        seen.append(model.readout.weight.detach().clone())
        return float("nan") if len(seen) <= 3 else 4.0

    monkeypatch.setattr(wordlm, "fixed_window_loss", scripted)
    recipe = WordRecipe(
        vocab_size=20,
        eval_every=2,
        train=TrainConfig(window=6, batch_size=4, steps=5, log_every=2),
    )
    out = wordlm.word_lm_metrics(0, 8, 1, recipe)
    assert out["best_step"] == 0
    assert out["valid_nats"] == float("inf")
    torch.manual_seed(0)
    initial = WordLM(len(wordlm.word_splits(20)[0]), 8, 1, 0.2).readout.weight
    # the test reads the weights training started from
    assert torch.equal(seen[3], initial)
    assert not torch.equal(seen[2], initial)


def test_tied_model_shares_one_matrix_and_counts_it_once() -> None:
    torch.manual_seed(0)
    untied, tied = WordLM(50, 8, 2, 0.0), WordLM(50, 8, 2, 0.0, tied=True)
    assert tied.readout.weight is tied.embed.weight
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(untied) - count(tied) == 50 * 8  # one (V, H) matrix fewer
    # the same function untied, both matrices set to the tied one: the shared matrix's
    # gradient is the sum of the two uses' gradients (autograd adds them)
    untied.load_state_dict({k: v for k, v in tied.state_dict().items()})
    assert torch.equal(untied.readout.weight, untied.embed.weight)
    tokens = torch.randint(0, 50, (2, 4))
    for model in (tied, untied):
        model(tokens)[0].square().mean().backward()
    both = untied.embed.weight.grad + untied.readout.weight.grad  # type: ignore[operator]
    assert torch.allclose(tied.embed.weight.grad, both, atol=1e-7)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, True, 2.5])
def test_model_sizes_checked(bad: object) -> None:
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        WordLM(10, bad, 1, 0.0)  # type: ignore[arg-type]


def _tiny_recipe(**changes: object) -> WordRecipe:
    recipe = WordRecipe(
        vocab_size=20,
        eval_every=2,
        train=TrainConfig(window=6, batch_size=4, steps=4, log_every=2),
    )
    return dataclasses.replace(recipe, **changes)


def test_job_runs_on_the_device_the_sweep_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_authors(monkeypatch)
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    default = wordlm.word_lm_metrics(0, 8, 1, _tiny_recipe())
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    explicit = wordlm.word_lm_metrics(0, 8, 1, _tiny_recipe())
    assert explicit["device"] == default["device"] == "cpu"
    # the device moves are no-ops on the CPU: the same numbers
    assert explicit == default
    monkeypatch.setenv("BOOK_DEVICE", "cuda")
    with pytest.raises(ValueError, match="sees no CUDA device"):
        wordlm.word_lm_metrics(0, 8, 1, _tiny_recipe())


def test_tied_job_has_fewer_parameters_and_trains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _two_authors(monkeypatch)
    untied = wordlm.word_lm_metrics(0, 8, 1, _tiny_recipe())
    tied = wordlm.word_lm_metrics(0, 8, 1, _tiny_recipe(tied=True))
    vocab, _ = wordlm.word_splits(20)  # the toy corpus has fewer words than 20
    assert untied["parameters"] - tied["parameters"] == len(vocab) * 8
    # a finite, trained score
    assert tied["valid_nats"] < untied["valid_curve"][0][1] + 1.0


@pytest.mark.parametrize("field", ["vocab_size", "hidden_size", "num_layers"])
def test_a_word_model_refuses_each_zero_size_by_name(field: str) -> None:
    sizes = {
        "vocab_size": 5,
        "hidden_size": 4,
        "num_layers": 1,
        "dropout": 0.0,
        field: 0,
    }
    with pytest.raises(ValueError, match=rf"^{field}\b"):
        WordLM(**sizes)
