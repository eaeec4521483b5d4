"""A T5-small-like encoder-decoder in plain PyTorch, for inference and torch.jit.trace.

T5-small's shape (6 + 6 layers, d_model 512, 8 heads of 64, feed-forward 2048 with ReLU,
vocabulary 32128, RMS layer norm without bias, no biases anywhere, bucketed relative position
bias shared across the layers of a stack, cross-attention, tied and rescaled lm_head). One
input: the decoder reads the encoder's ids shifted right by one (teacher forcing), so the model
runs on token ids like the decoders. Random weights; nothing is downloaded.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class T5Config:
    n_layer: int
    d_model: int
    n_head: int
    d_kv: int
    d_ff: int
    vocab_size: int
    num_buckets: int = 32
    max_distance: int = 128
    layer_norm_epsilon: float = 1e-6
    initializer_factor: float = 1.0


CONFIGS = {
    "t5-small": T5Config(n_layer=6, d_model=512, n_head=8, d_kv=64, d_ff=2048, vocab_size=32128),
    "t5-tiny": T5Config(n_layer=2, d_model=64, n_head=4, d_kv=16, d_ff=128, vocab_size=1000),
}


class T5LayerNorm(nn.Module):
    """RMS norm: no mean subtracted, no bias (computed in fp32 as T5 does)."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps)).to(x.dtype)


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """T5's bucketing: exact buckets for small distances, logarithmic ones up to max_distance."""
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact)
                         / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, relative_position, large)


class T5Attention(nn.Module):
    def __init__(self, cfg, has_relative_bias, bidirectional):
        super().__init__()
        self.n_head, self.d_kv = cfg.n_head, cfg.d_kv
        inner = cfg.n_head * cfg.d_kv
        self.q = nn.Linear(cfg.d_model, inner, bias=False)
        self.k = nn.Linear(cfg.d_model, inner, bias=False)
        self.v = nn.Linear(cfg.d_model, inner, bias=False)
        self.o = nn.Linear(inner, cfg.d_model, bias=False)
        self.bidirectional = bidirectional
        self.num_buckets, self.max_distance = cfg.num_buckets, cfg.max_distance
        self.relative_attention_bias = nn.Embedding(cfg.num_buckets, cfg.n_head) if has_relative_bias else None

    def position_bias(self, positions):
        """[1, heads, q, k] from positions [q] (queries and keys at the same positions)."""
        relative = positions.unsqueeze(0) - positions.unsqueeze(1)
        buckets = relative_position_bucket(relative, self.bidirectional, self.num_buckets, self.max_distance)
        return self.relative_attention_bias(buckets).permute(2, 0, 1).unsqueeze(0)

    def heads(self, x):
        b, s, _ = x.shape
        return x.view(b, -1, self.n_head, self.d_kv).transpose(1, 2)

    def forward(self, x, kv, bias):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(kv)), self.heads(self.v(kv))
        scores = torch.matmul(q, k.transpose(3, 2))  # T5 does not scale by 1/sqrt(d)
        if bias is not None:  # cross-attention has no position bias
            scores = scores + bias
        attn = F.softmax(scores.float(), dim=-1).type_as(scores)
        out = torch.matmul(attn, v).transpose(1, 2).flatten(2)
        return self.o(out)


class T5FF(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.wi = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.wo = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x):
        return self.wo(F.relu(self.wi(x)))


class T5Block(nn.Module):
    def __init__(self, cfg, is_decoder, has_relative_bias):
        super().__init__()
        eps = cfg.layer_norm_epsilon
        self.self_norm = T5LayerNorm(cfg.d_model, eps)
        self.self_attn = T5Attention(cfg, has_relative_bias, bidirectional=not is_decoder)
        self.cross_norm = T5LayerNorm(cfg.d_model, eps) if is_decoder else None
        self.cross_attn = T5Attention(cfg, False, bidirectional=True) if is_decoder else None
        self.ff_norm = T5LayerNorm(cfg.d_model, eps)
        self.ff = T5FF(cfg)

    def forward(self, x, self_bias, memory, cross_bias):
        h = self.self_norm(x)
        x = x + self.self_attn(h, h, self_bias)
        if self.cross_attn is not None:
            x = x + self.cross_attn(self.cross_norm(x), memory, cross_bias)
        return x + self.ff(self.ff_norm(x))


class T5Stack(nn.Module):
    def __init__(self, cfg, is_decoder):
        super().__init__()
        self.is_decoder = is_decoder
        self.block = nn.ModuleList(T5Block(cfg, is_decoder, has_relative_bias=(i == 0))
                                   for i in range(cfg.n_layer))
        self.final_layer_norm = T5LayerNorm(cfg.d_model, cfg.layer_norm_epsilon)

    def forward(self, x, positions, memory, cross_bias):
        # The first layer's relative position bias serves every layer of the stack.
        bias = self.block[0].self_attn.position_bias(positions)
        if self.is_decoder:
            future = positions.unsqueeze(0) > positions.unsqueeze(1)  # [q, k], True = masked
            bias = bias.masked_fill(future, torch.finfo(bias.dtype).min)
        for block in self.block:
            x = block(x, bias, memory, cross_bias)
        return self.final_layer_norm(x)


class T5ForConditionalGeneration(nn.Module):
    """input_ids [batch, seq] int64 -> logits [batch, seq, vocab] of the decoder, which reads the
    ids shifted right by one (start token 0)."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.shared = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.encoder = T5Stack(cfg, is_decoder=False)
        self.decoder = T5Stack(cfg, is_decoder=True)

    def forward(self, input_ids):
        positions = (torch.ones_like(input_ids[0]).cumsum(dim=0) - 1)  # [seq], from the input
        memory = self.encoder(self.shared(input_ids), positions, None, None)
        decoder_ids = torch.cat([torch.zeros_like(input_ids[:, :1]), input_ids[:, :-1]], dim=1)
        out = self.decoder(self.shared(decoder_ids), positions, memory, None)
        out = out * (self.config.d_model ** -0.5)  # tied embeddings are rescaled (T5 v1.0)
        return F.linear(out, self.shared.weight)


def build(cfg, seed=0):
    """T5's init: embeddings N(0, f), q N(0, f (d d_kv)^-1/2), k/v N(0, f d^-1/2), o N(0, f
    (h d_kv)^-1/2), wi N(0, f d^-1/2), wo N(0, f d_ff^-1/2), norms ones."""
    model = T5ForConditionalGeneration(cfg)
    g = torch.Generator().manual_seed(seed)
    f, d = cfg.initializer_factor, cfg.d_model
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 2)[-2] if "." in name else name
            std = {"q": f * (d * cfg.d_kv) ** -0.5, "k": f * d ** -0.5, "v": f * d ** -0.5,
                   "o": f * (cfg.n_head * cfg.d_kv) ** -0.5, "wi": f * d ** -0.5,
                   "wo": f * cfg.d_ff ** -0.5}.get(leaf)
            if name.endswith("norm.weight"):
                p.fill_(1.0)
            elif std is not None:
                p.normal_(0.0, std, generator=g)
            else:  # the shared embedding and the relative position biases
                p.normal_(0.0, f, generator=g)
    return model.eval()
