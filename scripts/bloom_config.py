"""BLOOM's configuration: the zoo's two sizes and Hugging Face config.json files read and checked.

Torch-free, so that `replay export` refuses a bad config before it pays for importing torch.
"""
import json
from dataclasses import dataclass


@dataclass
class BloomConfig:
    n_layer: int
    hidden_size: int
    n_head: int
    vocab_size: int
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    apply_residual_connection_post_layernorm: bool = False

    @property
    def head_dim(self):
        return self.hidden_size // self.n_head


CONFIGS = {
    "bloom-560m": BloomConfig(n_layer=24, hidden_size=1024, n_head=16, vocab_size=250880),
    "bloom-tiny": BloomConfig(n_layer=2, hidden_size=64, n_head=4, vocab_size=1000),
}

# HF config.json spellings: bloom-560m's own file says n_embed / num_attention_heads.
_ALIASES = {
    "n_layer": ("n_layer", "num_hidden_layers"),
    "hidden_size": ("hidden_size", "n_embed"),
    "n_head": ("n_head", "num_attention_heads"),
    "vocab_size": ("vocab_size",),
}


def config_from_dict(d):
    """BloomConfig from a Hugging Face style dict; ValueError says what is wrong."""
    if not isinstance(d, dict):
        raise ValueError("config must be a JSON object")
    kw = {}
    for key, names in _ALIASES.items():
        found = [d[n] for n in names if d.get(n) is not None]
        if not found:
            raise ValueError(f"config lacks {' / '.join(names)}")
        if not isinstance(found[0], int) or isinstance(found[0], bool) or found[0] <= 0:
            raise ValueError(f"config {names[0]} must be a positive integer, got {found[0]!r}")
        kw[key] = found[0]
    for key in ("layer_norm_epsilon", "initializer_range"):
        if key in d:
            try:
                kw[key] = float(d[key])
            except (TypeError, ValueError):  # null, a list, "small"
                raise ValueError(f"config {key} must be a number, got {d[key]!r}") from None
    kw["apply_residual_connection_post_layernorm"] = bool(
        d.get("apply_residual_connection_post_layernorm", False))
    cfg = BloomConfig(**kw)
    if cfg.hidden_size % cfg.n_head:
        raise ValueError(f"hidden_size {cfg.hidden_size} is not divisible by n_head {cfg.n_head}")
    return cfg


def config_from_json(path):
    with open(path) as f:
        return config_from_dict(json.load(f))
