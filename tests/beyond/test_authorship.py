"""Tests for chapter_code.beyond.authorship: normalizing, the block splits, passages,
the classifier, the baseline."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from torch import nn

from chapter_code.beyond import authorship
from chapter_code.beyond.authorship import (
    ALPHABET,
    AuthorshipConfig,
    Blocks,
    CharClassifier,
    encode,
    evenly,
    ngram_predict,
    normalize,
    sample_passages,
    split_blocks,
    train_authorship,
)
from chapter_code.core import runtime
from chapter_code.lm.ngram import CharNGram


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(5)


def test_normalize_drops_layout_and_keeps_words() -> None:
    text = (
        "ACT I. SCENE 2.\nHAMLET.\nTo be, or NOT to be: that is\n  the Question!  "
        "[Exit.]\n12 Lines'd  -- end?\n"
    )
    assert (
        normalize(text) == "to be, or not to be: that is the question! lines'd -- end?"
    )
    assert normalize('Café\tand "tea"\n\nX') == "caf and tea"
    assert normalize("") == ""
    assert set(normalize("Mixed CASE, (brackets) & digits 42; ok.")) <= set(ALPHABET)


def test_normalize_rejects_non_strings() -> None:
    with pytest.raises(ValueError, match="^text must be a string; got bytes"):
        normalize(b"abc")  # type: ignore[arg-type]


def test_split_blocks_deals_whole_blocks_in_turn() -> None:
    text = "".join(chr(ord("a") + i) * 2 for i in range(8)) + "z"  # aa bb cc ... hh z
    blocks = split_blocks(text, 2, 3)
    assert blocks == Blocks(
        train=["aa", "dd", "gg"], valid=["bb", "ee", "hh"], test=["cc", "ff"]
    )
    four = split_blocks("abcdefghijklmnop", 2, 4)
    assert four == Blocks(
        train=["ab", "cd", "ij", "kl"], valid=["ef", "mn"], test=["gh", "op"]
    )
    # no character of the text is in two splits, and none is lost but the tail
    assert sorted("".join(four.train + four.valid + four.test)) == sorted(
        "abcdefghijklmnop"
    )


def test_split_blocks_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="^block must be an int >= 1; got 0"):
        split_blocks("abcdef", 0, 3)
    with pytest.raises(ValueError, match="^cycle must be an int >= 3; got 2"):
        split_blocks("abcdef", 1, 2)
    with pytest.raises(ValueError, match="^block must be an int >= 1; got 2.0"):
        split_blocks("abcdef", 2.0, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^cycle must be an int >= 3; got 3.0"):
        split_blocks("abcdef", 2, 3.0)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError,
        match="^text must hold at least cycle \\* block = 6 characters; got 5",
    ):
        split_blocks("abcde", 2, 3)
    assert split_blocks("abcdef", 2, 3) == Blocks(["ab"], ["cd"], ["ef"])
    assert split_blocks("abc", 1, 3) == Blocks(["a"], ["b"], ["c"])


def test_evenly_spreads_the_choice() -> None:
    items = [str(i) for i in range(10)]
    assert evenly(items, 5) == ["0", "2", "4", "6", "8"]
    assert evenly(items, 3) == ["0", "3", "6"]
    assert evenly(items, 1) == ["0"]
    assert evenly(items, 10) == items
    assert evenly(items, 12) == items
    with pytest.raises(ValueError, match="^n must be an int >= 1; got 0"):
        evenly(items, 0)
    with pytest.raises(ValueError, match="^n must be an int >= 1; got 2.0"):
        evenly(items, 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^n must be an int >= 1; got True"):
        evenly(items, True)


def test_sample_passages_stay_inside_one_block_and_follow_the_generator() -> None:
    blocks = ["abcdefgh", "ABCDEFGH", "01234567"]
    passages = sample_passages(blocks, 300, 3, torch.Generator().manual_seed(0))
    assert len(passages) == 300
    assert all(len(p) == 3 for p in passages)
    assert all(any(p in b for b in blocks) for p in passages)
    # every block, every start 0..5
    assert {p[0] for p in passages} >= {"a", "f", "A", "F", "0", "5"}
    # a passage never runs off its block's end
    assert not {p[0] for p in passages} & set("ghGH67")
    runtime.seed_everything(123)  # the global seed changes nothing
    again = sample_passages(blocks, 300, 3, torch.Generator().manual_seed(0))
    assert again == passages
    assert sample_passages(blocks, 300, 3, torch.Generator().manual_seed(1)) != passages
    assert sample_passages(
        ["abc", "xyz"], 50, 3, torch.Generator().manual_seed(0)
    ).count("abc") in range(10, 41)
    assert sample_passages(["abc"], 1, 1, torch.Generator().manual_seed(0))[0] in "abc"


def test_sample_passages_errors_name_the_argument() -> None:
    gen = torch.Generator()
    with pytest.raises(ValueError, match="^n must be an int >= 1; got 0"):
        sample_passages(["abc"], 0, 2, gen)
    with pytest.raises(ValueError, match="^length must be an int >= 1; got 0"):
        sample_passages(["abc"], 1, 0, gen)
    with pytest.raises(ValueError, match="^length must be an int >= 1; got 2.0"):
        sample_passages(["abc"], 1, 2.0, gen)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^n must be an int >= 1; got True"):
        sample_passages(["abc"], True, 2, gen)
    with pytest.raises(
        ValueError, match="^blocks must be non-empty and each at least length = 4"
    ):
        sample_passages(["abcd", "abc"], 1, 4, gen)
    with pytest.raises(ValueError, match="^blocks must be non-empty"):
        sample_passages([], 1, 1, gen)


def test_encode_by_alphabet_position() -> None:
    ids = encode(["ab c", "z.?!"])
    assert ids.tolist() == [
        [ALPHABET.index(c) for c in "ab c"],
        [ALPHABET.index(c) for c in "z.?!"],
    ]
    assert ids.dtype == torch.int64
    assert encode([" "]).tolist() == [[0]]
    with pytest.raises(
        ValueError,
        match="^passages must be normalized: character 'A' is not in ALPHABET",
    ):
        encode(["aA"])
    with pytest.raises(
        ValueError, match="^passages must be a non-empty list of strings of one length"
    ):
        encode(["ab", "abc"])
    with pytest.raises(ValueError, match="^passages must be a non-empty list"):
        encode([])


def test_classifier_reads_out_the_last_state_of_the_lstm() -> None:
    torch.manual_seed(0)
    net = CharClassifier(len(ALPHABET), 5, 7, 3)
    ids = encode(["the cat", "a dog's"])  # (2, 7)
    cell = nn.LSTMCell(5, 7)
    with torch.no_grad():
        cell.weight_ih.copy_(net.lstm.weight_ih_l0)
        cell.weight_hh.copy_(net.lstm.weight_hh_l0)
        cell.bias_ih.copy_(net.lstm.bias_ih_l0)
        cell.bias_hh.copy_(net.lstm.bias_hh_l0)
        h = c = torch.zeros(2, 7)
        for t in range(ids.shape[1]):  # one character at a time
            h, c = cell(net.embed(ids[:, t]), (h, c))
        expected = h @ net.readout.weight.T + net.readout.bias
        got = net(ids)
    assert got.shape == (2, 3)
    torch.testing.assert_close(got, expected)
    # only the passage's characters matter, in order: a changed first character changes
    # the logits
    assert not torch.allclose(net(encode(["xhe cat"])), got[:1])


def test_ngram_predict_is_the_more_likely_model() -> None:
    a = CharNGram(2, 0.1).fit("ab ab ab ab ab abba")
    b = CharNGram(2, 0.1).fit("ba ba ba ba ba baab")
    passages = ["ab ab", "ba ba", "abab", "bbaa", "a a b"]
    expected = [
        min(range(2), key=lambda i: [a, b][i].nats_per_char(p)) for p in passages
    ]
    got = ngram_predict([a, b], passages)
    assert got.tolist() == expected
    assert got.tolist()[:2] == [0, 1]
    assert ngram_predict([b, a], passages).tolist() == [1 - e for e in expected]
    with pytest.raises(
        ValueError, match="^models and passages must be non-empty lists"
    ):
        ngram_predict([], passages)
    with pytest.raises(
        ValueError, match="^models and passages must be non-empty lists"
    ):
        ngram_predict([a], [])


def _authors(n: int = 1500) -> dict[str, str]:
    """Two authors with one alphabet: the first writes mostly 'a' and 'b', the second
    mostly 'c' and 'd'."""
    gen = torch.Generator().manual_seed(3)
    first = torch.tensor([0.45, 0.45, 0.05, 0.05]).multinomial(
        n, replacement=True, generator=gen
    )
    second = torch.tensor([0.05, 0.05, 0.45, 0.45]).multinomial(
        2 * n, replacement=True, generator=gen
    )
    return {
        "first": "".join("abcd"[i] for i in first.tolist()),
        "second": "".join("abcd"[i] for i in second.tolist()),
    }


TINY = AuthorshipConfig(
    lengths=(8, 16),
    block=50,
    cycle=3,
    embedding_size=4,
    hidden_size=8,
    steps=40,
    batch_size=8,
    lr=2e-2,
    n_test=30,
    orders=(3, 1, 2),
    select_length=16,
)


def test_tiny_training_separates_two_alphabets() -> None:
    result = train_authorship(_authors(), seed=0, config=TINY)
    assert result["authors"] == ["first", "second"]
    assert result["ngram"] == {8: 1.0, 16: 1.0}
    assert result["ngram_valid"] == {3: 1.0, 1: 1.0, 2: 1.0}
    assert result["ngram_order"] == 1  # a tie goes to the lowest order
    assert result["lstm"][8] >= 0.9
    assert result["lstm"][16] >= 0.95
    assert len(result["losses"]) == TINY.steps
    assert sum(result["losses"][-5:]) < 0.5 * sum(result["losses"][:5])
    # the first author's 30 blocks hold 10 training blocks
    assert result["train_chars"] == 10 * 50
    assert 0 < result["seconds"] < 600
    net = CharClassifier(len(ALPHABET), 4, 8, 2)
    net.load_state_dict(result["state"])
    assert net(encode(["abababab", "cdcdcdcd"])).argmax(1).tolist() == [0, 1]


def test_training_is_seeded_and_the_baseline_sees_balanced_training_text() -> None:
    texts = _authors()
    short = replace(TINY, steps=4, n_test=8, orders=(1,))
    one = train_authorship(texts, seed=1, config=short)
    runtime.seed_everything(77)
    two = train_authorship(texts, seed=1, config=short)
    assert one["losses"] == two["losses"]
    assert all(torch.equal(one["state"][k], two["state"][k]) for k in one["state"])
    other = train_authorship(texts, seed=2, config=short)
    assert other["losses"][0] != one["losses"][0]  # other initial weights
    assert other["losses"][1:] != one["losses"][1:]


def test_ngram_order_is_chosen_on_validation() -> None:
    # both authors use the same letters; only their order tells them apart, so a unigram
    # model is at chance
    gen = torch.Generator().manual_seed(4)
    first = "".join(
        ["abc ", "cba "][i] for i in torch.randint(2, (600,), generator=gen).tolist()
    )
    second = "".join(
        ["acb ", "bca "][i] for i in torch.randint(2, (600,), generator=gen).tolist()
    )
    config = AuthorshipConfig(
        lengths=(12,),
        block=40,
        cycle=4,
        steps=1,
        batch_size=2,
        n_test=40,
        orders=(1, 3),
        select_length=12,
        hidden_size=4,
        embedding_size=2,
    )
    result = train_authorship({"first": first, "second": second}, seed=0, config=config)
    assert result["ngram_valid"][1] < 0.8
    assert result["ngram_valid"][3] == 1.0
    assert result["ngram_order"] == 3
    assert result["ngram"] == {12: 1.0}


def test_train_authorship_needs_two_authors() -> None:
    with pytest.raises(
        ValueError, match="^texts must map at least two authors to their texts; got 1"
    ):
        train_authorship({"one": "ab" * 500}, seed=0, config=TINY)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"block": 0}, "^block must be an int >= 1; got 0"),
        ({"hidden_size": 0}, "^hidden_size must be an int >= 1; got 0"),
        ({"embedding_size": True}, "^embedding_size must be an int >= 1; got True"),
        ({"steps": 0}, "^steps must be an int >= 1; got 0"),
        ({"n_test": 0}, "^n_test must be an int >= 1; got 0"),
        ({"select_length": 0}, "^select_length must be an int >= 1; got 0"),
        ({"test_seed": 0}, "^test_seed must be an int >= 1; got 0"),
        ({"batch_size": 0}, "^batch_size must be an int >= 1; got 0"),
        (
            {"cycle": 2},
            "^cycle must be an int >= 3 \\(training, validation and test blocks\\); "
            "got 2",
        ),
        ({"cycle": True}, "^cycle must be an int >= 3"),
        ({"cycle": 3.5}, "^cycle must be an int >= 3"),
        (
            {"batch_size": 7},
            "^batch_size must be even \\(half from each author\\); got 7",
        ),
        (
            {"lengths": ()},
            "^lengths must be a non-empty tuple of ints >= 1; got \\(\\)",
        ),
        ({"lengths": (4, 0)}, "^lengths must be a non-empty tuple of ints >= 1"),
        ({"orders": (True,)}, "^orders must be a non-empty tuple of ints >= 1"),
        ({"orders": (2.0,)}, "^orders must be a non-empty tuple of ints >= 1"),
        ({"lengths": (2001,)}, "^lengths and select_length must be <= block = 2000"),
        ({"select_length": 2001}, "^lengths and select_length must be <= block = 2000"),
        ({"lr": 0.0}, "^lr, clip and k must be > 0; got lr=0.0"),
        ({"clip": 0.0}, "^lr, clip and k must be > 0"),
        ({"k": 0.0}, "^lr, clip and k must be > 0"),
    ],
)
def test_config_errors_name_the_argument(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AuthorshipConfig(**changes)


def test_config_boundaries_are_accepted() -> None:
    config = AuthorshipConfig(
        lengths=(2000,),
        select_length=2000,
        cycle=3,
        batch_size=2,
        test_seed=1,
        block=2000,
    )
    assert config.lengths == (2000,)
    assert config.cycle == 3
    assert (
        AuthorshipConfig(lengths=(1,), orders=(1,), block=1, select_length=1).block == 1
    )


def test_classify_shakespeare_milton_reads_both_corpora_normalized(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _authors()
    monkeypatch.setattr(
        authorship,
        "shakespeare_text",
        lambda: "HAMLET.\n" + texts["first"].capitalize(),
    )
    monkeypatch.setattr(
        authorship, "milton_text", lambda: "BOOK I.\n" + texts["second"]
    )
    short = replace(TINY, steps=2, n_test=8, orders=(1,))
    result = authorship.classify_shakespeare_milton(seed=0, config=short)
    assert result["authors"] == ["Shakespeare", "Milton"]
    assert result["losses"] == train_authorship(texts, seed=0, config=short)["losses"]
    assert authorship.CORPUS_FILES == ("data/shakespeare.txt", "data/milton.txt")


def test_train_authorship_matches_its_steps_written_out() -> None:
    """The streams of passages, the baseline and the first training step, reproduced by
    hand from the seeds."""
    texts = _authors()
    config = replace(
        TINY, steps=2, orders=(1,), n_test=40, lengths=(2, 3), select_length=2
    )
    seed = 3
    result = train_authorship(texts, seed=seed, config=config)
    blocks = [split_blocks(t, config.block, config.cycle) for t in texts.values()]
    n_train = min(len(b.train) for b in blocks)
    train = [evenly(b.train, n_train) for b in blocks]
    models = [CharNGram(1, config.k).fit(" ".join(t)) for t in train]

    gen = torch.Generator().manual_seed(config.test_seed + 1)  # validation passages
    valid = [
        p
        for b in blocks
        for p in sample_passages(b.valid, config.n_test, config.select_length, gen)
    ]
    labels = torch.arange(2).repeat_interleave(config.n_test)
    assert result["ngram_valid"] == {
        1: (ngram_predict(models, valid) == labels).float().mean().item()
    }

    # test passages, length by length
    test = torch.Generator().manual_seed(config.test_seed)
    for length in config.lengths:
        passages = [
            p
            for b in blocks
            for p in sample_passages(b.test, config.n_test, length, test)
        ]
        assert (
            result["ngram"][length]
            == (ngram_predict(models, passages) == labels).float().mean().item()
        )
    # the streams matter: some short passages are misread
    assert max(result["ngram"].values()) < 1.0
    assert result["ngram_valid"][1] < 1.0

    torch.manual_seed(seed)
    net = CharClassifier(len(ALPHABET), config.embedding_size, config.hidden_size, 2)
    data = torch.Generator().manual_seed(seed + 1)  # the training stream
    length = config.lengths[
        int(torch.randint(len(config.lengths), (1,), generator=data))
    ]
    half = config.batch_size // 2
    passages = [p for t in train for p in sample_passages(t, half, length, data)]
    loss = nn.functional.cross_entropy(
        net(encode(passages)), torch.arange(2).repeat_interleave(half)
    )
    assert result["losses"][0] == pytest.approx(loss.item(), rel=1e-6)
    assert result["train_chars"] == n_train * config.block
