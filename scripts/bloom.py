"""BLOOM (bigscience/bloom-*) in plain PyTorch, for inference and torch.jit.trace.

Written without `transformers` so the export works offline and traces cleanly (the
transformers release of BLOOM uses a custom autograd GELU that TorchScript cannot save).
Module and parameter names follow Hugging Face's BloomModel, so HF checkpoints load by
name (lm_head is tied to word_embeddings and has no parameter of its own).

Everything that depends on the sequence length (ALiBi positions, causal mask) is derived
from `input_ids` by tensor ops, never by Python ints or factory ops with a baked device:
a trace taken at one length then runs at any length, and on any map_location device.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

# The configuration is torch-free (bloom_config.py); its names stay reachable as bloom.CONFIGS etc.
from bloom_config import CONFIGS, BloomConfig, config_from_dict, config_from_json  # noqa: F401


def alibi_slopes(n_head):
    """Per-head ALiBi slopes exactly as HF's build_alibi_tensor computes them (fp32).

    Closed form: with p = 2**floor(log2 n), head i (1-based, i <= p) gets 2**(-8i/p);
    the n - p extra heads of a non-power-of-2 count get 2**(-4j/p) for odd j = 1, 3, ...
    (the odd-indexed slopes of the 2p-head sequence).
    """
    p = 2 ** math.floor(math.log2(n_head))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(p) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + p, dtype=torch.int32))
    if p != n_head:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * p) - 3))), dtype=torch.float32)
        n_extra = min(p, n_head - p)
        extra = torch.pow(extra_base, torch.arange(1, 1 + 2 * n_extra, 2, dtype=torch.int32))
        slopes = torch.cat([slopes, extra])
    return slopes


def bloom_gelu(x):
    # BLOOM's tanh approximation, written out as in bloom_gelu_forward (plain aten ops).
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class BloomAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head, self.head_dim = cfg.n_head, cfg.head_dim
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.query_key_value = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, x, residual, alibi, causal_mask):
        b, q_len, _ = x.shape
        nh, hd = self.n_head, self.head_dim
        # BLOOM fuses q/k/v per head: the 3h output is laid out [head, (q, k, v), head_dim].
        fused = self.query_key_value(x).view(b, q_len, nh, 3, hd)
        # (-1 / flatten rather than b * nh: size arithmetic would trace as aten::item calls)
        q = fused[..., 0, :].transpose(1, 2).reshape(-1, q_len, hd)         # [b*nh, q, hd]
        k = fused[..., 1, :].permute(0, 2, 3, 1).reshape(-1, hd, q_len)     # [b*nh, hd, q]
        v = fused[..., 2, :].transpose(1, 2).reshape(-1, q_len, hd)         # [b*nh, q, hd]
        # alibi + q @ k^T / sqrt(d), in one baddbmm as BLOOM does.
        scores = alibi.baddbmm(batch1=q, batch2=k, beta=1.0, alpha=self.inv_norm_factor)
        scores = scores.view(b, nh, q_len, q_len)
        input_dtype = scores.dtype
        if input_dtype == torch.float16:  # BLOOM upcasts fp16 scores before masking
            scores = scores.to(torch.float)
        scores = scores.masked_fill(causal_mask, torch.finfo(scores.dtype).min)
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(input_dtype)
        ctx = torch.bmm(probs.flatten(0, 1), v)
        # merge heads: [b*nh, q, hd] -> [b, q, nh*hd]
        ctx = ctx.view(b, nh, q_len, hd).permute(0, 2, 1, 3).reshape(b, q_len, -1)
        return self.dense(ctx) + residual


class BloomMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(cfg.hidden_size, 4 * cfg.hidden_size)
        self.dense_4h_to_h = nn.Linear(4 * cfg.hidden_size, cfg.hidden_size)

    def forward(self, x, residual):
        return self.dense_4h_to_h(bloom_gelu(self.dense_h_to_4h(x))) + residual


class BloomBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        eps = cfg.layer_norm_epsilon
        self.post_ln_residual = cfg.apply_residual_connection_post_layernorm
        self.input_layernorm = nn.LayerNorm(cfg.hidden_size, eps=eps)
        self.self_attention = BloomAttention(cfg)
        self.post_attention_layernorm = nn.LayerNorm(cfg.hidden_size, eps=eps)
        self.mlp = BloomMLP(cfg)

    def forward(self, x, alibi, causal_mask):
        ln = self.input_layernorm(x)
        attn = self.self_attention(ln, ln if self.post_ln_residual else x, alibi, causal_mask)
        ln = self.post_attention_layernorm(attn)
        return self.mlp(ln, ln if self.post_ln_residual else attn)


class BloomForCausalLM(nn.Module):
    """input_ids [batch, seq] int64 -> logits [batch, seq, vocab]. No KV cache, no padding."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.word_embeddings_layernorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_epsilon)
        self.h = nn.ModuleList(BloomBlock(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_epsilon)
        # A buffer so that .to(device) and jit.load(map_location=...) move it; not persistent,
        # so state_dict() holds exactly the checkpoint's parameters.
        self.register_buffer("alibi_slopes", alibi_slopes(cfg.n_head), persistent=False)

    def _apply(self, fn, *args, **kwargs):
        # .to(bfloat16) would round the slopes; BLOOM keeps them fp32 whatever the model dtype
        # and casts only the finished ALiBi bias. Let fn move them, then restore fp32.
        slopes = self.alibi_slopes
        super()._apply(fn, *args, **kwargs)
        self.alibi_slopes = slopes.to(self.alibi_slopes.device)
        return self

    def forward(self, input_ids):
        hidden = self.word_embeddings_layernorm(self.word_embeddings(input_ids))
        # Positions 0..s-1 from the input itself (HF: (mask.cumsum(-1) - 1) * mask, mask all ones).
        ones = torch.ones_like(input_ids)
        pos = ones.cumsum(dim=-1) - 1                                   # [b, s]
        alibi = self.alibi_slopes.view(1, -1, 1) * pos.unsqueeze(1)    # [b, nh, s] fp32
        alibi = alibi.flatten(0, 1).unsqueeze(1).to(hidden.dtype)      # [b*nh, 1, s]
        causal_mask = (pos.unsqueeze(1) > pos.unsqueeze(2)).unsqueeze(1)  # [b, 1, s, s], True = masked
        for block in self.h:
            hidden = block(hidden, alibi, causal_mask)
        hidden = self.ln_f(hidden)
        return F.linear(hidden, self.word_embeddings.weight)            # tied lm_head


def init_weights(model, seed=0):
    """HF BloomPreTrainedModel._init_weights: N(0, initializer_range) for Linear/Embedding
    weights, zero biases, LayerNorm ones/zeros. Deterministic for a given seed."""
    g = torch.Generator().manual_seed(seed)
    std = model.config.initializer_range
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.normal_(0.0, std, generator=g)
                if getattr(m, "bias", None) is not None:
                    m.bias.zero_()
            elif isinstance(m, nn.LayerNorm):
                m.weight.fill_(1.0)
                m.bias.zero_()
    return model


def expected_num_parameters(cfg):
    """Closed form: embeddings V*h, two outer layernorms (embeddings, ln_f) 4h, and per block
    2 layernorms 4h + qkv 3h^2+3h + dense h^2+h + h->4h 4h^2+4h + 4h->h 4h^2+h = 12h^2 + 13h."""
    h = cfg.hidden_size
    return cfg.vocab_size * h + 4 * h + cfg.n_layer * (12 * h * h + 13 * h)
