"""The backward pass: vector-Jacobian products written by hand, one per forward function.

Every ``*_backward`` takes the forward function's inputs and ``grad_out = dL/d(output)`` and
returns ``dL/d(input)`` and, where the forward has weights, their gradients in the same
dataclass as the weights (heads and activation carried over). Nothing is stored between the
forward and the backward: each function recomputes what it needs from its inputs.
The loss is the caller's: only ``dL/d(output)`` comes in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace

import numpy as np

from .block import BLOCKS, BlockParams, StackConfig, StackParams, run_stream
from .readouts import vector_norm
from .sublayers import (
    AttentionParams,
    FeedForwardParams,
    NormParams,
    _feature_mean,
    attention_weights,
    gelu,
    merge_heads,
    relu,
    split_heads,
)


def _position_sum(x: np.ndarray) -> np.ndarray:
    """Sum over batch and tokens: the gradient of a weight applied at every position alike."""
    return x.sum(axis=(0, 1))


def _weight_gradient(inputs: np.ndarray, grad_out: np.ndarray) -> np.ndarray:
    """dL/dW for ``inputs @ W``: ``sum over positions of inputs^T grad_out``."""
    return np.tensordot(inputs, grad_out, axes=((0, 1), (0, 1)))


# ------------------------------------------------------------------------------------------ norms


def _no_gradient(p: NormParams) -> NormParams:
    return NormParams(np.zeros_like(p.gain), np.zeros_like(p.bias))


def layer_norm_backward(x: np.ndarray, p: NormParams, eps: float, grad_out: np.ndarray):
    """With ``n = (x - mean) / sqrt(var + eps)`` and ``g = grad_out * gain``:
    ``dL/dx = (g - mean(g) - n mean(g n)) / sqrt(var + eps)``."""
    centred = x - _feature_mean(x)
    inv_std = 1.0 / np.sqrt(_feature_mean(centred * centred) + eps)
    n = centred * inv_std
    g = grad_out * p.gain
    grad_x = inv_std * (g - _feature_mean(g) - n * _feature_mean(g * n))
    return grad_x, NormParams(_position_sum(grad_out * n), _position_sum(grad_out))


def rms_norm_backward(x: np.ndarray, p: NormParams, eps: float, grad_out: np.ndarray):
    """With ``n = x / sqrt(mean(x^2) + eps)`` and ``g = grad_out * gain``:
    ``dL/dx = (g - n mean(g n)) / sqrt(mean(x^2) + eps)``; the unused bias gets zero."""
    inv_rms = 1.0 / np.sqrt(_feature_mean(x * x) + eps)
    n = x * inv_rms
    g = grad_out * p.gain
    grad_x = inv_rms * (g - n * _feature_mean(g * n))
    return grad_x, NormParams(_position_sum(grad_out * n), np.zeros_like(p.bias))


def normalize_backward(x: np.ndarray, p: NormParams, kind: str, eps: float, grad_out: np.ndarray):
    """Backward of :func:`~blockstab.sublayers.normalize`; ``none`` passes ``grad_out`` through."""
    if kind == "layernorm":
        return layer_norm_backward(x, p, eps, grad_out)
    if kind == "rmsnorm":
        return rms_norm_backward(x, p, eps, grad_out)
    if kind == "none":
        return grad_out, _no_gradient(p)
    raise ValueError(f"{kind!r} is not a norm kind")


# ------------------------------------------------------------------------------------ feed-forward


def gelu_derivative(z: np.ndarray) -> np.ndarray:
    """d/dz of the tanh-approximate GELU ``0.5 z (1 + tanh(k (z + c z^3)))``."""
    k, c = np.sqrt(2.0 / np.pi), 0.044715
    t = np.tanh(k * (z + c * z**3))
    return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * k * (1.0 + 3.0 * c * z * z)


def relu_derivative(z: np.ndarray) -> np.ndarray:
    return (z > 0.0).astype(z.dtype)


ACTIVATION_PAIRS = {"relu": (relu, relu_derivative), "gelu": (gelu, gelu_derivative)}


def feed_forward_backward(x: np.ndarray, p: FeedForwardParams, grad_out: np.ndarray):
    """Backward of ``act(x W_in + b_in) W_out + b_out``."""
    act, act_derivative = ACTIVATION_PAIRS[p.activation]
    pre_activation = x @ p.w_in + p.b_in
    grad_pre = (grad_out @ p.w_out.T) * act_derivative(pre_activation)
    grads = FeedForwardParams(
        w_in=_weight_gradient(x, grad_pre),
        b_in=_position_sum(grad_pre),
        w_out=_weight_gradient(act(pre_activation), grad_out),
        b_out=_position_sum(grad_out),
        activation=p.activation,
    )
    return grad_pre @ p.w_in.T, grads


# --------------------------------------------------------------------------------------- attention


def attention_backward(x: np.ndarray, p: AttentionParams, causal: bool, grad_out: np.ndarray):
    """Backward of ``concat_h(softmax(Q_h K_h^T / sqrt(d_head)) V_h) W_O`` with ``Q, K, V = x W_Q, x W_K, x W_V``.

    Softmax rows: ``dL/dS = A * (dL/dA - sum_j A_j dL/dA_j)``; masked entries have ``A = 0``
    and so get no gradient.
    """
    if p.has_biases:
        raise NotImplementedError("attention biases (a trained model's) have no backward pass here")
    weights = attention_weights(x, p, causal)
    q = split_heads(x @ p.w_query, p.heads)
    k = split_heads(x @ p.w_key, p.heads)
    v = split_heads(x @ p.w_value, p.heads)
    scale = 1.0 / np.sqrt(q.shape[-1])
    grad_mixed = split_heads(grad_out @ p.w_out.T, p.heads)
    grad_weights = grad_mixed @ v.transpose(0, 1, 3, 2)
    grad_scores = weights * (grad_weights - (grad_weights * weights).sum(axis=-1, keepdims=True))
    grad_q = merge_heads(grad_scores @ k) * scale
    grad_k = merge_heads(grad_scores.transpose(0, 1, 3, 2) @ q) * scale
    grad_v = merge_heads(weights.transpose(0, 1, 3, 2) @ grad_mixed)
    grads = AttentionParams(
        w_query=_weight_gradient(x, grad_q),
        w_key=_weight_gradient(x, grad_k),
        w_value=_weight_gradient(x, grad_v),
        w_out=_weight_gradient(merge_heads(weights @ v), grad_out),
        heads=p.heads,
    )
    grad_x = grad_q @ p.w_query.T + grad_k @ p.w_key.T + grad_v @ p.w_value.T
    return grad_x, grads


# ------------------------------------------------------------------------------------------ blocks


def residual_add_backward(grad_out: np.ndarray, cfg: StackConfig):
    """Backward of ``s*x + a*F``: returns ``(dL/dx, dL/dF) = (s grad_out, a grad_out)``."""
    return cfg.skip_scale * grad_out, cfg.branch_scale * grad_out


def _left_out(p: BlockParams, grad_h: np.ndarray):
    """An attention-only block (``cfg.feed_forward`` off): y = h, the FFN sub-block gets no gradient."""
    zero = replace(p.feed_forward, **{f.name: np.zeros_like(getattr(p.feed_forward, f.name))
                                       for f in fields(p.feed_forward) if f.name != "activation"})
    return grad_h, zero, _no_gradient(p.norm2)


def post_ln_block_backward(x: np.ndarray, p: BlockParams, cfg: StackConfig, grad_out: np.ndarray):
    """Backward of the Post-LN block ``h = Norm(s*x + a*Attn(x)); y = Norm(s*h + a*FFN(h))``."""
    (_, _, attn_sum, h, _, ffn_sum, _), _ = BLOCKS["post"](x, p, cfg)
    if cfg.feed_forward:
        grad_ffn_sum, norm2 = normalize_backward(ffn_sum, p.norm2, cfg.norm, cfg.eps, grad_out)
        grad_h_skip, grad_ffn = residual_add_backward(grad_ffn_sum, cfg)
        grad_h_branch, ffn = feed_forward_backward(h, p.feed_forward, grad_ffn)
        grad_h = grad_h_skip + grad_h_branch
    else:
        grad_h, ffn, norm2 = _left_out(p, grad_out)
    grad_attn_sum, norm1 = normalize_backward(attn_sum, p.norm1, cfg.norm, cfg.eps, grad_h)
    grad_x_skip, grad_attn = residual_add_backward(grad_attn_sum, cfg)
    grad_x_branch, attn = attention_backward(x, p.attention, cfg.causal, grad_attn)
    return grad_x_skip + grad_x_branch, BlockParams(attn, ffn, norm1, norm2)


def pre_ln_block_backward(x: np.ndarray, p: BlockParams, cfg: StackConfig, grad_out: np.ndarray):
    """Backward of the Pre-LN block ``h = s*x + a*Attn(Norm(x)); y = s*h + a*FFN(Norm(h))``."""
    (_, x_norm, _, h, h_norm, _, _), _ = BLOCKS["pre"](x, p, cfg)
    if cfg.feed_forward:
        grad_h_skip, grad_ffn = residual_add_backward(grad_out, cfg)
        grad_h_norm, ffn = feed_forward_backward(h_norm, p.feed_forward, grad_ffn)
        grad_h_branch, norm2 = normalize_backward(h, p.norm2, cfg.norm, cfg.eps, grad_h_norm)
        grad_h = grad_h_skip + grad_h_branch
    else:
        grad_h, ffn, norm2 = _left_out(p, grad_out)
    grad_x_skip, grad_attn = residual_add_backward(grad_h, cfg)
    grad_x_norm, attn = attention_backward(x_norm, p.attention, cfg.causal, grad_attn)
    grad_x_branch, norm1 = normalize_backward(x, p.norm1, cfg.norm, cfg.eps, grad_x_norm)
    return grad_x_skip + grad_x_branch, BlockParams(attn, ffn, norm1, norm2)


BLOCK_BACKWARDS = {"post": post_ln_block_backward, "pre": pre_ln_block_backward}


# ------------------------------------------------------------------------------------------- stack


def _sum_params(grads):
    """Field-wise sum of equally shaped parameter dataclasses; non-array fields from the first."""
    first = grads[0]
    if isinstance(first, np.ndarray):
        return np.sum(grads, axis=0)
    if not is_dataclass(first):
        return first
    return replace(first, **{f.name: _sum_params([getattr(g, f.name) for g in grads]) for f in fields(first)})


def parameter_norm(params) -> float:
    """Frobenius norm over every array in a parameter dataclass (nested ones included), scale-safe:
    each array's :func:`~blockstab.readouts.vector_norm`, then the norm of those norms (a rescaled
    hypot), so no square under- or overflows however small or large the gradients are."""
    if isinstance(params, np.ndarray):
        return float(vector_norm(params.ravel()))
    if not is_dataclass(params):
        return 0.0
    return float(vector_norm(np.array([parameter_norm(getattr(params, f.name)) for f in fields(params)])))


@dataclass(frozen=True)
class StackGradients:
    """Gradients of a stack for one ``grad_output``.

    ``stream``: ``(depth + 1, batch, tokens, d_model)``, dL/d each entry of
    :attr:`~blockstab.block.Trace.stream` (the input, then each block's output, before the
    Pre-LN final norm). ``blocks``: one :class:`BlockParams` of gradients per layer, each the
    gradient with respect to the weights *as used at that layer*, also when weights are shared.
    ``final_norm``: zero for Post-LN, which has no final norm. ``shared``: the weights were shared.
    """

    stream: np.ndarray
    blocks: tuple[BlockParams, ...]
    final_norm: NormParams
    shared: bool

    @property
    def params(self) -> StackParams:
        """dL/d the :class:`StackParams` as passed: per-layer gradients summed when shared."""
        blocks = (_sum_params(self.blocks),) if self.shared else self.blocks
        return StackParams(blocks, self.final_norm)


# The forward pass's share of stack_backward's time (about a fifth to a quarter, measured on the
# benchmark's 200-block stack): each backward block recomputes its forward, then goes back.
FORWARD_SHARE = 0.25


def stack_backward(
    x: np.ndarray,
    params: StackParams,
    cfg: StackConfig,
    grad_output: np.ndarray,
    progress: Callable[[float], None] | None = None,
) -> StackGradients:
    """Run the stack on ``x`` keeping only the stream, then backpropagate ``grad_output`` = dL/d(output).

    ``output`` is :attr:`~blockstab.block.Trace.output` (after the final norm for Pre-LN).
    ``progress(fraction)`` is called after each block, forward and backward; an exception it
    raises propagates (that is how a caller cancels). Diverging stacks give inf/nan, not warnings.
    """
    if np.shape(grad_output) != np.shape(x):
        raise ValueError(f"grad_output must have the output's shape {np.shape(x)}")
    forward_progress = None if progress is None else (lambda f: progress(FORWARD_SHARE * f))
    stream = run_stream(x, params, cfg, forward_progress)
    grad_stream = np.empty_like(stream)
    blocks = [None] * cfg.depth
    for i, grad, grads in backward_steps(stream, params, cfg, grad_output):
        grad_stream[i] = grad
        if i == cfg.depth:
            final_norm = grads
            continue
        blocks[i] = grads
        if progress is not None:
            progress(FORWARD_SHARE + (1.0 - FORWARD_SHARE) * (cfg.depth - i) / cfg.depth)
    return StackGradients(grad_stream, tuple(blocks), final_norm, shared=len(params.blocks) == 1)


def backward_steps(stream: np.ndarray, params: StackParams, cfg: StackConfig, grad_output: np.ndarray):
    """Backpropagate ``grad_output`` through a stack whose forward left ``stream`` (as
    :func:`~blockstab.block.run_stream`), one step at a time so a caller can keep only what it
    needs: yields ``(i, dL/d stream[i], gradients)`` for ``i = depth`` (the final norm's gradients)
    down to 0 (block ``i``'s gradients, recomputing the block from ``stream[i]``)."""
    block_backward = BLOCK_BACKWARDS[cfg.placement]
    with np.errstate(over="ignore", invalid="ignore"):
        if cfg.placement == "pre":
            grad, final_norm = normalize_backward(stream[-1], params.final_norm, cfg.norm, cfg.eps, grad_output)
        else:
            grad, final_norm = grad_output, _no_gradient(params.final_norm)
    yield cfg.depth, grad, final_norm
    for i in reversed(range(cfg.depth)):
        with np.errstate(over="ignore", invalid="ignore"):
            grad, block = block_backward(stream[i], params.block(i), cfg.at_block(i), grad)
        yield i, grad, block


# Frobenius norms reported per block: W^2 of the feed-forward (Xiong et al. 2020, Theorem 1), the
# feed-forward and attention sublayers, and all of a block's weights.
BLOCK_NORM_PARTS = {
    "ffn_w_out": lambda b: b.feed_forward.w_out,
    "feed_forward": lambda b: b.feed_forward,
    "attention": lambda b: b.attention,
    "block": lambda b: b,
}


def block_gradient_norms(block: BlockParams) -> dict[str, float]:
    """The norms of :data:`BLOCK_NORM_PARTS` for one block's gradients."""
    return {name: parameter_norm(part(block)) for name, part in BLOCK_NORM_PARTS.items()}


def layer_gradient_norms(grads: StackGradients) -> dict[str, np.ndarray]:
    """:func:`block_gradient_norms` per layer, each ``(depth,)``; ``stream``: the norm of
    dL/d stream, ``(depth + 1,)``."""
    per_block = [block_gradient_norms(b) for b in grads.blocks]
    norms = {name: np.array([n[name] for n in per_block]) for name in BLOCK_NORM_PARTS}
    norms["stream"] = vector_norm(grads.stream.reshape(len(grads.stream), -1))
    return norms
