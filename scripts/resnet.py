"""ResNet-50 in plain PyTorch (no torchvision), for inference and torch.jit.trace.

The stress for the replay is the image stack: convolutions of many shapes (7x7 stem, 1x1 and
3x3 bottlenecks, strided downsampling), batch norm in eval mode, ReLU, max and average pooling,
and one linear classifier. Input: float images [batch, 3, H, W]. Random weights (He init).
"""
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class ResNetConfig:
    blocks: tuple
    width: int = 64
    num_classes: int = 1000
    image_size: int = 224


CONFIGS = {
    "resnet50": ResNetConfig(blocks=(3, 4, 6, 3)),
    "resnet-tiny": ResNetConfig(blocks=(1, 1, 1, 1), width=8, num_classes=10, image_size=32),
}


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_ch, width, stride):
        super().__init__()
        out_ch = width * self.expansion
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(out_ch))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """images [batch, 3, H, W] float -> logits [batch, classes]."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        w = cfg.width
        self.conv1 = nn.Conv2d(3, w, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(w)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        layers, in_ch = [], w
        for i, n in enumerate(cfg.blocks):
            width = w * 2 ** i
            blocks = []
            for j in range(n):
                blocks.append(Bottleneck(in_ch, width, stride=2 if (j == 0 and i > 0) else 1))
                in_ch = width * Bottleneck.expansion
            layers.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_ch, cfg.num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def build(cfg, seed=0):
    """He-initialised convolutions, BN ones/zeros with unit running variance, N(0, 0.01) fc."""
    model = ResNet(cfg)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.out_channels * m.kernel_size[0] * m.kernel_size[1]
                m.weight.normal_(0.0, (2.0 / fan_out) ** 0.5, generator=g)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.fill_(1.0)
                m.bias.zero_()
            elif isinstance(m, nn.Linear):
                m.weight.normal_(0.0, 0.01, generator=g)
                m.bias.zero_()
    return model.eval()
