"""The model zoo of `replay export --model NAME`: architectures written in plain PyTorch, each
a different stress for the replay, all with random weights (nothing is downloaded).

  bloom-560m, bloom-tiny   BLOOM decoder: ALiBi, baddbmm attention, fused qkv (bloom.py)
  gpt2-small, gpt2-tiny    GPT-2 decoder written op by op: matmul attention, traced size
                           arithmetic (gpt2.py)
  bert-base, bert-tiny     BERT encoder through nn.TransformerEncoder: one fused op per layer
                           (bert.py)
  t5-small, t5-tiny        T5 encoder-decoder: RMS norm, relative position bias,
                           cross-attention (t5.py)
  resnet50, resnet-tiny    ResNet-50: convolutions, batch norm, pooling; image input (resnet.py)

The `-tiny` sizes are for tests. Text models take token ids [batch, seq]; image models take
float images [batch, 3, H, W] (`--input float32[1,3,224,224]` on replay's commands).
"""
from dataclasses import dataclass

import torch

import bert
import bloom
import gpt2
import resnet
import t5


@dataclass(frozen=True)
class ZooModel:
    build: object        # (seed) -> eval-mode nn.Module with random weights
    image_size: int = 0  # image models: the side of their square input; text models: 0
    vocab_size: int = 0  # text models: rows of the token embedding

    @property
    def takes_images(self):
        return self.image_size > 0

    def example(self, batch, seq_len, dtype, generator):
        """An input to trace with: token ids [batch, seq_len] or images [batch, 3, S, S]."""
        if self.takes_images:
            s = self.image_size
            return torch.randn(batch, 3, s, s, generator=generator).to(dtype)
        return torch.randint(0, self.vocab_size, (batch, seq_len), generator=generator)

    def input_spec(self, batch, seq_len, dtype_name):
        """The input as `replay --input` writes it."""
        if self.takes_images:
            return f"{dtype_name}[{batch},3,{self.image_size},{self.image_size}]"
        return f"int64[{batch},{seq_len}]:0..{self.vocab_size}"


def _bloom(cfg):
    return lambda seed: bloom.init_weights(bloom.BloomForCausalLM(cfg), seed).eval()


MODELS = {
    **{name: ZooModel(_bloom(cfg), vocab_size=cfg.vocab_size) for name, cfg in bloom.CONFIGS.items()},
    **{name: ZooModel(lambda seed, c=cfg: gpt2.build(c, seed), vocab_size=cfg.vocab_size)
       for name, cfg in gpt2.CONFIGS.items()},
    **{name: ZooModel(lambda seed, c=cfg: bert.build(c, seed), vocab_size=cfg.vocab_size)
       for name, cfg in bert.CONFIGS.items()},
    **{name: ZooModel(lambda seed, c=cfg: t5.build(c, seed), vocab_size=cfg.vocab_size)
       for name, cfg in t5.CONFIGS.items()},
    **{name: ZooModel(lambda seed, c=cfg: resnet.build(c, seed), image_size=cfg.image_size)
       for name, cfg in resnet.CONFIGS.items()},
}
