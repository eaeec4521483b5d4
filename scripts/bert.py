"""A BERT encoder through `nn.TransformerEncoder`, for inference and torch.jit.trace.

BERT-base's shape (12 layers, hidden 768, 12 heads, feed-forward 3072, vocabulary 30522, GELU,
post-norm) with PyTorch's own encoder layer. Traced in eval mode under no_grad, each layer
takes PyTorch's fused fast path: one `aten::_transformer_encoder_layer_fwd` per layer doing
attention, both projections, the feed-forward and both norms, a very different unit of work
for the replay from the op-by-op decoders. Random weights; nothing is downloaded.
"""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class BertConfig:
    n_layer: int
    hidden_size: int
    n_head: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02


CONFIGS = {
    "bert-base": BertConfig(n_layer=12, hidden_size=768, n_head=12, intermediate_size=3072, vocab_size=30522),
    "bert-tiny": BertConfig(n_layer=2, hidden_size=64, n_head=4, intermediate_size=256, vocab_size=1000,
                            max_position_embeddings=256),
}


class BertEmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, input_ids):
        # Positions and token types from the input itself: the trace runs at any length.
        pos = torch.ones_like(input_ids).cumsum(dim=-1) - 1
        x = (self.word_embeddings(input_ids) + self.position_embeddings(pos)
             + self.token_type_embeddings(torch.zeros_like(input_ids)))
        return self.LayerNorm(x)


class BertModel(nn.Module):
    """input_ids [batch, seq] int64 -> hidden states [batch, seq, hidden]."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.embeddings = BertEmbeddings(cfg)
        layer = nn.TransformerEncoderLayer(
            cfg.hidden_size, cfg.n_head, cfg.intermediate_size, dropout=0.0, activation="gelu",
            layer_norm_eps=cfg.layer_norm_eps, batch_first=True, norm_first=False)
        # No nested tensors: there is no padding mask, and the trace must see dense tensors.
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layer, enable_nested_tensor=False)

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))


def build(cfg, seed=0):
    """The model with BERT's init: N(0, 0.02) weights, zero biases, LayerNorm ones/zeros."""
    model = BertModel(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, cfg.initializer_range, generator=g)
            elif "norm" in name.lower() and name.endswith("weight"):
                p.fill_(1.0)
            else:
                p.zero_()
    return model.eval()
