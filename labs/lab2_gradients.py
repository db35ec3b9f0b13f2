"""Lab for "Gradients through time": clipping the gradient by its global norm."""

from __future__ import annotations

from bookbuild.labs import Exercise, Lab


def checkpoint_clip_gradients(clip_gradients):
    """Check the returned norm, the clipped gradients, one factor for all parameters, and no change below kappa."""
    import torch
    from torch import nn

    def params_with(grads):
        params = [nn.Parameter(torch.zeros_like(g)) for g in grads]
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        return params

    grads = [torch.tensor([3.0, 0.0]), torch.tensor([[0.0, 4.0]])]  # joint norm 5: each alone is 3 or 4
    ours = params_with(grads)
    norm = clip_gradients(ours, 1.0)
    assert norm is not None, "clip_gradients should return the norm before clipping; it returned None"
    assert abs(float(norm) - 5.0) < 1e-4, f"clip_gradients should return the norm before clipping, 5.0 here; got {norm}"
    joint = torch.sqrt(sum(p.grad.pow(2).sum() for p in ours)).item()
    assert abs(joint - 1.0) < 1e-4, (
        f"after clipping at kappa = 1.0 the joint norm of all gradients should be 1.0, got {joint:.3f}: use one "
        "factor, kappa / ||g||, computed from all parameters together, not one per parameter")
    for p, g in zip(ours, grads, strict=True):
        assert torch.allclose(p.grad, g / 5.0, atol=1e-5), (
            f"each gradient should be scaled by the same factor 1/5 (its direction kept); got {p.grad.tolist()} "
            f"from {g.tolist()}")
    small = params_with([torch.tensor([0.3, 0.4])])
    clip_gradients(small, 1.0)
    assert torch.allclose(small[0].grad, torch.tensor([0.3, 0.4])), (
        f"a gradient whose norm (0.5) is below kappa (1.0) must not change; got {small[0].grad.tolist()}")
    torch.manual_seed(0)
    model = nn.Linear(6, 3)
    model(torch.randn(8, 6)).pow(2).sum().backward()
    twin = [nn.Parameter(p.detach().clone()) for p in model.parameters()]
    for t, p in zip(twin, model.parameters(), strict=True):
        t.grad = p.grad.clone()
    theirs = torch.nn.utils.clip_grad_norm_(twin, 0.5).item()
    mine = clip_gradients(list(model.parameters()), 0.5)
    assert abs(float(mine) - theirs) < 1e-4 * theirs, f"the norm should be {theirs:.4f}, as PyTorch finds; got {mine}"
    gap = max((p.grad - t.grad).abs().max().item() for p, t in zip(model.parameters(), twin, strict=True))
    assert gap < 1e-5, f"the clipped gradients differ from torch.nn.utils.clip_grad_norm_'s by {gap:.2g}"
    print("Checkpoint passed: clip_gradients matches clip_grad_norm_ and keeps the direction")


LAB = Lab(
    slug="gradients",
    chapter="book/gradients",
    title="Lab 2: clipping the gradient",
    intro=(
        "A gradient that explodes can throw a model's weights far from anything it has learned in a single "
        "step. Clipping by the global norm shrinks the whole gradient, all parameters together, whenever its "
        "length exceeds a threshold $\\kappa$, and leaves it alone otherwise. You write that rule and compare "
        "it with PyTorch's `clip_grad_norm_`."
    ),
    setup="import math\nfrom collections.abc import Iterable\n\nimport torch\nfrom torch import nn",
    exercises=[
        Exercise(
            target="chapter_code.bptt.clipping:clip_gradients",
            task=(
                "The parameters' gradients are already collected in `grads`. Compute their joint norm "
                "$\\lVert g \\rVert$ (all entries of all gradients as one vector), rescale every gradient in "
                "place by $\\min(1, \\kappa / \\lVert g \\rVert)$, and return the norm before clipping as a "
                "float."
            ),
            hint=(
                "`sum(g.pow(2).sum() for g in grads)` is the squared joint norm. One factor multiplies every "
                "gradient (`g.mul_(scale)`), which is what keeps the direction. A tiny constant added to the "
                "norm avoids dividing by zero."
            ),
            checkpoint=checkpoint_clip_gradients,
        ),
    ],
)
