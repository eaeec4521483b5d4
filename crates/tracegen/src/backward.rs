//! The backward pass of the generated step, on the autograd thread: each op's
//! `autograd::engine::evaluate_function: *Backward0` node around its kernels, in reverse
//! layer order, with an all-reduce of each bucket of gradients on NCCL's stream when the
//! job has several ranks (the collective's process group and sequence number recorded as
//! PyTorch records them).

use crate::builder::Builder;
use crate::event::{Counter, Value};
use crate::inputs::{recorded, Input, BF16, F32, I64};
use crate::kernels::{self, COMPUTE, NCCL};
use crate::workload::Workload;

/// Layers per gradient bucket (one all-reduce each).
const BUCKET_LAYERS: u64 = 4;

impl Workload {
    /// `autograd::engine::evaluate_function: NAME` around `NAME` around `body`.
    fn grad(
        &self,
        b: &mut Builder,
        node: &str,
        inputs: &[Input<'_>],
        body: impl FnOnce(&mut Builder),
    ) {
        b.op(
            &format!("autograd::engine::evaluate_function: {node}"),
            Vec::new(),
            |b| {
                b.op(node, recorded(inputs), body);
            },
        );
    }

    fn linear_backward(&self, b: &mut Builder, inp: u64, out: u64) {
        let m = self.tokens();
        let dy = [m, out];
        self.grad(b, "AddmmBackward0", &[Input::Tensor(&dy, BF16)], |b| {
            b.op(
                "aten::mm",
                recorded(&[Input::Tensor(&dy, BF16), Input::Tensor(&[out, inp], BF16)]),
                |b| {
                    b.launch(kernels::gemm("nn", m, inp, out));
                },
            );
            b.op(
                "aten::mm",
                recorded(&[
                    Input::Tensor(&[out, m], BF16),
                    Input::Tensor(&[m, inp], BF16),
                ]),
                |b| {
                    b.launch(kernels::gemm("nt", out, inp, m));
                },
            );
        });
    }

    fn layer_norm_backward(&self, b: &mut Builder) {
        let x = [self.batch, self.seq, self.hidden];
        let h = [self.hidden];
        self.grad(
            b,
            "NativeLayerNormBackward0",
            &[Input::Tensor(&x, BF16)],
            |b| {
                let shape = format!("[{}]", self.hidden);
                b.op(
                    "aten::native_layer_norm_backward",
                    recorded(&[
                        Input::Tensor(&x, BF16),
                        Input::Tensor(&x, BF16),
                        Input::Scalar(&shape),
                        Input::Tensor(&[self.tokens(), 1], F32),
                        Input::Tensor(&[self.tokens(), 1], F32),
                        Input::Tensor(&h, BF16),
                        Input::Tensor(&h, BF16),
                        Input::Scalar("[True, True, True]"),
                    ]),
                    |b| {
                        b.launch(kernels::layer_norm_backward_input(
                            self.tokens(),
                            self.hidden,
                        ));
                        b.launch(kernels::layer_norm_backward_weight(
                            self.tokens(),
                            self.hidden,
                        ));
                    },
                );
            },
        );
    }

    fn attention_backward(&self, b: &mut Builder) {
        let t = [self.batch, self.seq, self.heads, self.head_dim()];
        let all = [
            Input::Tensor(&t, BF16),
            Input::Tensor(&t, BF16),
            Input::Tensor(&t, BF16),
            Input::Tensor(&t, BF16),
        ];
        self.grad(
            b,
            "ScaledDotProductFlashAttentionBackward0",
            &all[..1],
            |b| {
                b.op(
                    "aten::_scaled_dot_product_flash_attention_backward",
                    recorded(&all),
                    |b| {
                        b.op("aten::_flash_attention_backward", recorded(&all), |b| {
                            let accum = self.batch * self.seq * self.heads * self.head_dim() * 4;
                            b.memset(accum, COMPUTE);
                            b.launch(kernels::flash_backward(
                                self.batch,
                                self.heads,
                                self.seq,
                                self.head_dim(),
                            ));
                            b.launch(kernels::flash_backward_convert(
                                self.batch,
                                self.heads,
                                self.seq,
                                self.head_dim(),
                            ));
                        });
                    },
                );
            },
        );
    }

    fn all_reduce(&self, b: &mut Builder, elements: u64) {
        let ranks: Vec<String> = (0..self.ranks).map(|r| r.to_string()).collect();
        let ranks = format!("\"[{}]\"", ranks.join(", "));
        let elements_text = elements.to_string();
        let seq = b.take(Counter::Seq);
        let collective = vec![
            ("Collective name", Value::Raw("\"allreduce\"".into())),
            ("dtype", Value::Raw("\"BFloat16\"".into())),
            ("In msg nelems", Value::Raw(elements_text.clone())),
            ("Out msg nelems", Value::Raw(elements_text)),
            ("Group size", Value::Raw(self.ranks.to_string())),
            ("In split size", Value::Raw("\"[]\"".into())),
            ("Out split size", Value::Raw("\"[]\"".into())),
            ("Global rank start", Value::Raw("0".into())),
            ("Global rank stride", Value::Raw("1".into())),
            ("Process Group Name", Value::Raw("\"0\"".into())),
            (
                "Process Group Description",
                Value::Raw("\"default_pg\"".into()),
            ),
            ("Process Group Ranks", Value::Raw(ranks)),
            ("Seq", Value::Id(Counter::Seq, seq)),
        ];
        let buffer = [elements];
        b.op("nccl:all_reduce", Vec::new(), |b| {
            b.op(
                "record_param_comms",
                collective
                    .clone()
                    .into_iter()
                    .chain(recorded(&[Input::Tensor(&buffer, BF16)]))
                    .collect(),
                |b| {
                    b.wait(NCCL, COMPUTE);
                    b.launch(kernels::all_reduce(elements, self.ranks, collective));
                },
            );
        });
    }

    pub(crate) fn backward(&self, b: &mut Builder) {
        let h = self.hidden;
        let m = self.tokens();
        self.grad(b, "NllLossBackward0", &[Input::Tensor(&[], BF16)], |b| {
            b.op(
                "aten::nll_loss_backward",
                recorded(&[
                    Input::Tensor(&[], BF16),
                    Input::Tensor(&[m, self.vocab], BF16),
                    Input::Tensor(&[m], I64),
                ]),
                |b| {
                    b.memset(m * self.vocab * 2, COMPUTE);
                },
            );
        });
        self.grad(
            b,
            "LogSoftmaxBackward0",
            &[Input::Tensor(&[m, self.vocab], BF16)],
            |b| {
                b.op(
                    "aten::_log_softmax_backward_data",
                    recorded(&[
                        Input::Tensor(&[m, self.vocab], BF16),
                        Input::Tensor(&[m, self.vocab], BF16),
                        Input::Scalar("1"),
                        Input::Scalar("15"),
                    ]),
                    |b| {
                        b.launch(kernels::log_softmax_backward(m, self.vocab));
                    },
                );
            },
        );
        self.linear_backward(b, h, self.vocab);
        self.layer_norm_backward(b);
        let per_layer = 12 * h * h;
        for layer in (0..self.layers).rev() {
            self.linear_backward(b, 4 * h, h);
            let x = [self.batch, self.seq, 4 * h];
            self.grad(b, "GeluBackward0", &[Input::Tensor(&x, BF16)], |b| {
                b.op(
                    "aten::gelu_backward",
                    recorded(&[
                        Input::Tensor(&x, BF16),
                        Input::Tensor(&x, BF16),
                        Input::Scalar("tanh"),
                    ]),
                    |b| {
                        b.launch(kernels::gelu_backward(m * 4 * h));
                    },
                );
            });
            self.linear_backward(b, h, 4 * h);
            self.layer_norm_backward(b);
            self.linear_backward(b, h, h);
            self.attention_backward(b);
            self.linear_backward(b, h, 3 * h);
            self.layer_norm_backward(b);
            if self.ranks > 1 && layer % BUCKET_LAYERS == 0 {
                self.all_reduce(b, per_layer * BUCKET_LAYERS.min(self.layers - layer));
            }
        }
        self.grad(
            b,
            "EmbeddingBackward0",
            &[Input::Tensor(&[self.batch, self.seq, h], BF16)],
            |b| {
                b.op(
                    "aten::embedding_dense_backward",
                    recorded(&[
                        Input::Tensor(&[self.batch, self.seq, h], BF16),
                        Input::Tensor(&[self.batch, self.seq], I64),
                        Input::Scalar(&self.vocab.to_string()),
                        Input::Scalar("-1"),
                        Input::Scalar("False"),
                    ]),
                    |b| {
                        b.memset(self.vocab * h * 4, COMPUTE);
                        b.launch(kernels::embedding_backward(m, h));
                    },
                );
            },
        );
        if self.ranks > 1 {
            self.all_reduce(b, self.vocab * h);
        }
    }
}
