//! The step every generated trace repeats: a GPT-style decoder trained in bfloat16 on one
//! H100 (data-parallel when there are several ranks): the batch copied in on a side stream,
//! the forward pass through `layers` blocks under `nn.Module` frames, the loss, the
//! backward pass on the autograd thread with gradient all-reduces on NCCL's stream
//! (`backward.rs`), the
//! fused AdamW step, and `loss.item()`, which synchronizes the step.

use crate::builder::{Builder, Copy};
use crate::event::{Name, Step};
use crate::inputs::{recorded, Input, BF16, F32, I64};
use crate::kernels::{self, COMPUTE, NCCL, SIDE};
use crate::rng::Rng;

/// The model and job a trace is generated for.
#[derive(Clone, Debug)]
pub struct Workload {
    pub layers: u64,
    pub batch: u64,
    pub seq: u64,
    pub hidden: u64,
    pub heads: u64,
    pub vocab: u64,
    /// World size: gradient all-reduces when above 1.
    pub ranks: u64,
    pub rank: u64,
    /// The host's main thread id (the process id too) and the autograd thread's.
    pub main_tid: u64,
    pub autograd_tid: u64,
    /// This rank's GPU durations are multiplied by this.
    pub slowdown: f64,
}

impl Workload {
    pub(crate) fn tokens(&self) -> u64 {
        self.batch * self.seq
    }

    pub(crate) fn head_dim(&self) -> u64 {
        self.hidden / self.heads
    }

    /// One step, its durations jittered by `rng` (every variant has the same events and
    /// the same ids, so it classifies the same).
    pub fn step(&self, rng: &mut Rng) -> Step {
        let mut b = Builder::new(rng, self.main_tid, self.slowdown);
        b.annotation(Name::Step, |b| {
            self.input_batch(b);
            b.module("GPT_0", 0, |b| self.forward(b));
            self.loss(b);
            b.tid = self.autograd_tid;
            self.backward(b);
            b.tid = self.main_tid;
            self.optimizer(b);
            self.item(b);
        });
        b.finish(40_000)
    }

    fn input_batch(&self, b: &mut Builder) {
        let tokens = self.tokens();
        let dims = [self.batch, self.seq];
        b.op(
            "aten::to",
            recorded(&[Input::Tensor(&dims, I64), Input::Scalar("")]),
            |b| {
                b.op(
                    "aten::_to_copy",
                    recorded(&[Input::Tensor(&dims, I64)]),
                    |b| {
                        b.op(
                            "aten::copy_",
                            recorded(&[
                                Input::Tensor(&dims, I64),
                                Input::Tensor(&dims, I64),
                                Input::Scalar("True"),
                            ]),
                            |b| {
                                b.memcpy(Copy::HostToDevice, tokens * 8, SIDE, 24.0);
                            },
                        );
                    },
                );
            },
        );
        b.op(
            "aten::ones_like",
            recorded(&[Input::Tensor(&dims, I64)]),
            |b| {
                b.op(
                    "aten::fill_",
                    recorded(&[Input::Tensor(&dims, I64), Input::Scalar("1")]),
                    |b| {
                        b.launch(kernels::fill(tokens, SIDE));
                    },
                );
            },
        );
        b.wait(COMPUTE, SIDE);
    }

    fn linear(&self, b: &mut Builder, name: &str, id: u64, inp: u64, out: u64) {
        let m = self.tokens();
        let x = [self.batch, self.seq, inp];
        let w = [out, inp];
        let bias = [out];
        b.module(name, id, |b| {
            b.op(
                "aten::linear",
                recorded(&[
                    Input::Tensor(&x, BF16),
                    Input::Tensor(&w, BF16),
                    Input::Tensor(&bias, BF16),
                ]),
                |b| {
                    b.op("aten::t", recorded(&[Input::Tensor(&w, BF16)]), |_| {});
                    let x2 = [m, inp];
                    let wt = [inp, out];
                    b.op(
                        "aten::addmm",
                        recorded(&[
                            Input::Tensor(&bias, BF16),
                            Input::Tensor(&x2, BF16),
                            Input::Tensor(&wt, BF16),
                            Input::Scalar("1"),
                            Input::Scalar("1"),
                        ]),
                        |b| {
                            b.launch(kernels::gemm("tn", m, out, inp));
                        },
                    );
                },
            );
        });
    }

    fn layer_norm(&self, b: &mut Builder, name: &str, id: u64) {
        let x = [self.batch, self.seq, self.hidden];
        let h = [self.hidden];
        let shape = format!("[{}]", self.hidden);
        b.module(name, id, |b| {
            b.op(
                "aten::layer_norm",
                recorded(&[
                    Input::Tensor(&x, BF16),
                    Input::Scalar(&shape),
                    Input::Tensor(&h, BF16),
                    Input::Tensor(&h, BF16),
                    Input::Scalar("1.0000000000000001e-05"),
                    Input::Scalar("True"),
                ]),
                |b| {
                    b.op(
                        "aten::native_layer_norm",
                        recorded(&[
                            Input::Tensor(&x, BF16),
                            Input::Scalar(&shape),
                            Input::Tensor(&h, BF16),
                            Input::Tensor(&h, BF16),
                            Input::Scalar("1.0000000000000001e-05"),
                        ]),
                        |b| {
                            b.launch(kernels::layer_norm(self.tokens(), self.hidden));
                        },
                    );
                },
            );
        });
    }

    fn add(&self, b: &mut Builder) {
        let x = [self.batch, self.seq, self.hidden];
        b.op(
            "aten::add",
            recorded(&[
                Input::Tensor(&x, BF16),
                Input::Tensor(&x, BF16),
                Input::Scalar("1"),
            ]),
            |b| {
                b.launch(kernels::add(self.tokens() * self.hidden));
            },
        );
    }

    fn attention(&self, b: &mut Builder) {
        let q = [self.batch, self.heads, self.seq, self.head_dim()];
        let qkv = [
            Input::Tensor(&q, BF16),
            Input::Tensor(&q, BF16),
            Input::Tensor(&q, BF16),
        ];
        b.op(
            "aten::scaled_dot_product_attention",
            recorded(&[
                qkv[0].clone(),
                qkv[1].clone(),
                qkv[2].clone(),
                Input::Absent,
                Input::Scalar("0."),
                Input::Scalar("True"),
            ]),
            |b| {
                b.op(
                    "aten::_scaled_dot_product_flash_attention",
                    recorded(&[
                        qkv[0].clone(),
                        qkv[1].clone(),
                        qkv[2].clone(),
                        Input::Scalar("0."),
                        Input::Scalar("True"),
                        Input::Scalar("False"),
                    ]),
                    |b| {
                        let t = [self.batch, self.seq, self.heads, self.head_dim()];
                        b.op(
                            "aten::_flash_attention_forward",
                            recorded(&[
                                Input::Tensor(&t, BF16),
                                Input::Tensor(&t, BF16),
                                Input::Tensor(&t, BF16),
                                Input::Absent,
                                Input::Absent,
                                Input::Scalar(&self.seq.to_string()),
                                Input::Scalar(&self.seq.to_string()),
                                Input::Scalar("0."),
                                Input::Scalar("True"),
                            ]),
                            |b| {
                                b.launch(kernels::flash_forward(
                                    self.batch,
                                    self.heads,
                                    self.seq,
                                    self.head_dim(),
                                ));
                            },
                        );
                    },
                );
            },
        );
    }

    fn forward(&self, b: &mut Builder) {
        let dims = [self.batch, self.seq];
        let table = [self.vocab, self.hidden];
        b.module("Embedding_0", 1, |b| {
            b.op(
                "aten::embedding",
                recorded(&[
                    Input::Tensor(&table, BF16),
                    Input::Tensor(&dims, I64),
                    Input::Scalar("-1"),
                    Input::Scalar("False"),
                    Input::Scalar("False"),
                ]),
                |b| {
                    b.op(
                        "aten::index_select",
                        recorded(&[
                            Input::Tensor(&table, BF16),
                            Input::Scalar("0"),
                            Input::Tensor(&[self.tokens()], I64),
                        ]),
                        |b| {
                            b.launch(kernels::embedding(self.tokens(), self.hidden));
                        },
                    );
                },
            );
        });
        let h = self.hidden;
        for layer in 0..self.layers {
            let base = 2 + layer * 8;
            b.module(&format!("Block_{layer}"), base, |b| {
                self.layer_norm(b, &format!("LayerNorm_{}", 2 * layer), base + 1);
                self.linear(b, &format!("Linear_{}", 4 * layer), base + 2, h, 3 * h);
                self.attention(b);
                self.linear(b, &format!("Linear_{}", 4 * layer + 1), base + 3, h, h);
                self.add(b);
                self.layer_norm(b, &format!("LayerNorm_{}", 2 * layer + 1), base + 4);
                self.linear(b, &format!("Linear_{}", 4 * layer + 2), base + 5, h, 4 * h);
                let x = [self.batch, self.seq, 4 * h];
                b.op(
                    "aten::gelu",
                    recorded(&[Input::Tensor(&x, BF16), Input::Scalar("tanh")]),
                    |b| {
                        b.launch(kernels::gelu(self.tokens() * 4 * h));
                    },
                );
                self.linear(b, &format!("Linear_{}", 4 * layer + 3), base + 6, 4 * h, h);
                self.add(b);
            });
        }
        self.layer_norm(b, "LayerNorm_final", 2 + self.layers * 8);
    }

    fn loss(&self, b: &mut Builder) {
        let m = self.tokens();
        let logits = [m, self.vocab];
        let target = [m];
        b.op(
            "aten::mm",
            recorded(&[
                Input::Tensor(&[m, self.hidden], BF16),
                Input::Tensor(&[self.hidden, self.vocab], BF16),
            ]),
            |b| {
                b.launch(kernels::gemm("tn", m, self.vocab, self.hidden));
            },
        );
        b.op(
            "aten::cross_entropy_loss",
            recorded(&[
                Input::Tensor(&logits, BF16),
                Input::Tensor(&target, I64),
                Input::Absent,
                Input::Scalar("1"),
                Input::Scalar("-100"),
                Input::Scalar("0."),
            ]),
            |b| {
                b.op(
                    "aten::log_softmax",
                    recorded(&[
                        Input::Tensor(&logits, BF16),
                        Input::Scalar("1"),
                        Input::Absent,
                    ]),
                    |b| {
                        b.op(
                            "aten::_log_softmax",
                            recorded(&[
                                Input::Tensor(&logits, BF16),
                                Input::Scalar("1"),
                                Input::Scalar("False"),
                            ]),
                            |b| {
                                b.launch(kernels::log_softmax(m, self.vocab));
                            },
                        );
                    },
                );
                b.op(
                    "aten::nll_loss_nd",
                    recorded(&[
                        Input::Tensor(&logits, BF16),
                        Input::Tensor(&target, I64),
                        Input::Absent,
                        Input::Scalar("1"),
                        Input::Scalar("-100"),
                    ]),
                    |b| {
                        b.op(
                            "aten::nll_loss_forward",
                            recorded(&[
                                Input::Tensor(&logits, BF16),
                                Input::Tensor(&target, I64),
                                Input::Absent,
                                Input::Scalar("1"),
                                Input::Scalar("-100"),
                            ]),
                            |b| {
                                b.launch(kernels::nll_loss(m));
                            },
                        );
                    },
                );
            },
        );
    }

    fn optimizer(&self, b: &mut Builder) {
        let params = self.layers * 12 * self.hidden * self.hidden + self.vocab * self.hidden;
        if self.ranks > 1 {
            b.wait(COMPUTE, NCCL);
        }
        b.annotation(Name::Text("Optimizer.step#AdamW.step".into()), |b| {
            b.op("aten::_fused_adamw_", Vec::new(), |b| {
                for _ in 0..4 {
                    b.launch(kernels::adam(params / 4));
                }
            });
        });
        b.annotation(
            Name::Text("Optimizer.zero_grad#AdamW.zero_grad".into()),
            |_| {},
        );
    }

    fn item(&self, b: &mut Builder) {
        b.op("aten::item", recorded(&[Input::Tensor(&[], F32)]), |b| {
            b.op(
                "aten::_local_scalar_dense",
                recorded(&[Input::Tensor(&[], F32)]),
                |b| {
                    b.memcpy(Copy::DeviceToHost, 4, COMPUTE, 0.002);
                    b.synchronize(COMPUTE);
                },
            );
        });
    }
}
