"""A GPT-2 decoder written op by op in plain PyTorch, for inference and torch.jit.trace.

What a new user writes when they port GPT-2 by hand: separate q/k/v from one fused
projection, heads split with size arithmetic (`h // n_head`, which a trace records as an
`aten::floor_divide` of 0-dim integer tensors), `q @ k^T` through `matmul` against a
transposed view, a causal mask sliced from a lower-triangular buffer, GPT-2's tanh GELU
written out, and the language-model head tied to the token embeddings. Random weights
(GPT-2's init); nothing is downloaded.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class GPT2Config:
    n_layer: int
    n_embd: int
    n_head: int
    vocab_size: int
    n_positions: int = 1024
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02


CONFIGS = {
    "gpt2-small": GPT2Config(n_layer=12, n_embd=768, n_head=12, vocab_size=50257),
    "gpt2-tiny": GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=256),
}


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        n = cfg.n_positions
        self.register_buffer("bias", torch.tril(torch.ones(n, n, dtype=torch.bool)).view(1, 1, n, n),
                             persistent=False)

    def split_heads(self, x):
        b, s, h = x.size()
        return x.view(b, s, self.n_head, h // self.n_head).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.size(-1), dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(v.size(-1))
        s = q.size(-2)
        causal = self.bias[:, :, :s, :s]
        w = w.masked_fill(~causal, torch.finfo(w.dtype).min)
        a = torch.matmul(F.softmax(w, dim=-1), v)
        b, nh, s, hd = a.size()
        a = a.permute(0, 2, 1, 3).contiguous().view(b, s, nh * hd)
        return self.c_proj(a)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = Attention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2LMHeadModel(nn.Module):
    """input_ids [batch, seq] int64 -> logits [batch, seq, vocab]. No KV cache."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.n_embd)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)

    def forward(self, input_ids):
        # Positions from the input itself, so the trace runs at any length and on any device.
        pos = torch.ones_like(input_ids).cumsum(dim=-1) - 1
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)  # tied lm_head


def build(cfg, seed=0):
    """The model with GPT-2's init: N(0, 0.02) weights, zero biases, LayerNorm ones/zeros."""
    model = GPT2LMHeadModel(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                m.weight.normal_(0.0, cfg.initializer_range, generator=g)
                if getattr(m, "bias", None) is not None:
                    m.bias.zero_()
            elif isinstance(m, nn.LayerNorm):
                m.weight.fill_(1.0)
                m.bias.zero_()
    return model.eval()
