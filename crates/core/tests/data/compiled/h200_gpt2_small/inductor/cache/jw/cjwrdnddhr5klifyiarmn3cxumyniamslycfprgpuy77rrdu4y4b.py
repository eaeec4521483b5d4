# AOT ID: ['0_inference']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/gp/cgppjauwn7ouf5orxms3jru7hid5wkcg7jftid4rhbvtk2ajmiqu.py
# Topologically Sorted Source Nodes: [embedding, cumsum, pos, embedding_1, x, layer_norm], Original ATen: [aten.embedding, aten.cumsum, aten.sub, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   cumsum => iota_default, mul_tensor, view_default
#   embedding => embedding
#   embedding_1 => embedding_1
#   layer_norm => add_1, add_2, mul, mul_1, rsqrt, sub_1, var_mean
#   pos => sub
#   x => add
# Graph fragment:
#   %arg0_1 : Tensor "i64[1, 5][5, 1]cuda:0" = PlaceHolder[target=arg0_1]
#   %arg1_1 : Tensor "f32[50257, 768][768, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %arg2_1 : Tensor "f32[1024, 768][768, 1]cuda:0" = PlaceHolder[target=arg2_1]
#   %getitem_1 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_1]
#   %buf1 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf1]
#   %arg3_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg3_1]
#   %arg4_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg4_1]
#   %embedding : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.embedding.default](args = (%arg1_1, %arg0_1), kwargs = {})
#   %iota_default : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.iota.default](args = (5,), kwargs = {start: 1, step: 1, dtype: torch.int64, device: cuda:0, requires_grad: False})
#   %mul_tensor : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%iota_default, 1), kwargs = {})
#   %view_default : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%mul_tensor, [1, 5]), kwargs = {})
#   %sub : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%expand_default, 1), kwargs = {})
#   %embedding_1 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.embedding.default](args = (%arg2_1, %sub), kwargs = {})
#   %add : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %embedding_1), kwargs = {})
#   %var_mean : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_1 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add, %getitem_1), kwargs = {})
#   %add_1 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem, 1e-05), kwargs = {})
#   %rsqrt : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_1,), kwargs = {})
#   %mul : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_1, %rsqrt), kwargs = {})
#   %mul_1 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul, %arg3_1), kwargs = {})
#   %add_2 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_1, %arg4_1), kwargs = {})
#   return %getitem_1,%buf1,%add_2
triton_red_fused_add_cumsum_embedding_native_layer_norm_sub_0 = async_compile.triton('triton_red_fused_add_cumsum_embedding_native_layer_norm_sub_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 8, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*i64', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_add_cumsum_embedding_native_layer_norm_sub_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 5, 'num_store': 1, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 25, 'r0_': 52224}}
)
@triton.jit
def triton_red_fused_add_cumsum_embedding_native_layer_norm_sub_0(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 768
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp10_mean = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp10_m2 = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    tmp10_weight = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp7 = tl.load(in_ptr2 + (r0_1 + 768*x0), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp1 = tl.full([1, 1], 50257, tl.int32)
        tmp2 = tmp0 + tmp1
        tmp3 = tmp0 < 0
        tmp4 = tl.where(tmp3, tmp2, tmp0)
        tl.device_assert(((0 <= tmp4) & (tmp4 < 50257)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 50257")
        tmp6 = tl.load(in_ptr1 + (r0_1 + 768*tmp4), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp8 = tmp6 + tmp7
        tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
        tmp10_mean_next, tmp10_m2_next, tmp10_weight_next = triton_helpers.welford_reduce(
            tmp9, tmp10_mean, tmp10_m2, tmp10_weight, roffset == 0
        )
        tmp10_mean = tl.where(r0_mask & xmask, tmp10_mean_next, tmp10_mean)
        tmp10_m2 = tl.where(r0_mask & xmask, tmp10_m2_next, tmp10_m2)
        tmp10_weight = tl.where(r0_mask & xmask, tmp10_weight_next, tmp10_weight)
    tmp11, tmp12, tmp13 = triton_helpers.welford(tmp10_mean, tmp10_m2, tmp10_weight, 1)
    tmp10 = tmp11[:, None]
    tmp14 = tmp12[:, None]
    tmp15 = tmp13[:, None]
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_1 = r0_index
        tmp22 = tl.load(in_ptr2 + (r0_1 + 768*x0), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp31 = tl.load(in_ptr3 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp33 = tl.load(in_ptr4 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
        tmp16 = tl.full([1, 1], 50257, tl.int32)
        tmp17 = tmp0 + tmp16
        tmp18 = tmp0 < 0
        tmp19 = tl.where(tmp18, tmp17, tmp0)
        tl.device_assert(((0 <= tmp19) & (tmp19 < 50257)) | ~(xmask), "index out of bounds: 0 <= tmp19 < 50257")
        tmp21 = tl.load(in_ptr1 + (r0_1 + 768*tmp19), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp23 = tmp21 + tmp22
        tmp24 = tmp23 - tmp10
        tmp25 = tl.full([1, 1], 768.0, tl.float32)
        tmp26 = (tmp14 / tmp25)
        tmp27 = tl.full([1, 1], 1e-05, tl.float32)
        tmp28 = tmp26 + tmp27
        tmp29 = libdevice.rsqrt(tmp28)
        tmp30 = tmp24 * tmp29
        tmp32 = tmp30 * tmp31
        tmp34 = tmp32 + tmp33
        tl.store(out_ptr2 + (r0_1 + 768*x0), tmp34, r0_mask & xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/sr/csrxrsmyp3waj52754vj5axorpzsoaesanr3h4fzz3v2cphpsxqc.py
# Topologically Sorted Source Nodes: [causal, invert, w_1, matmul, w], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
# Source node to ATen node mapping:
#   causal => slice_1, slice_2
#   invert => bitwise_not
#   matmul => view_7
#   w => div
#   w_1 => full_default_1, where
# Graph fragment:
#   %arg7_1 : Tensor "b8[1, 1, 1024, 1024][1048576, 1048576, 1024, 1]cuda:0" = PlaceHolder[target=arg7_1]
#   %bmm : Tensor "f32[12, 5, 5][25, 5, 1]cuda:0" = PlaceHolder[target=bmm]
#   %getitem_108 : Tensor "f32[1, 12, 5, 1][60, 5, 1, 60]cuda:0" = PlaceHolder[target=getitem_108]
#   %slice_1 : Tensor "b8[1, 1, 5, 1024][1048576, 1048576, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%arg7_1, 2, 0, 5), kwargs = {})
#   %slice_2 : Tensor "b8[1, 1, 5, 5][1048576, 1048576, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%slice_1, 3, 0, 5), kwargs = {})
#   %bitwise_not : Tensor "b8[1, 1, 5, 5][25, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_not.default](args = (%slice_2,), kwargs = {})
#   %full_default_1 : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], -3.4028234663852886e+38), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %view_7 : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%bmm, [1, 12, 5, 5]), kwargs = {})
#   %div : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%view_7, 8.0), kwargs = {})
#   %where : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.where.self](args = (%bitwise_not, %full_default_1, %div), kwargs = {})
#   %prepare_softmax_online_default_11 : [num_users=2] = call_function[target=torch.ops.prims.prepare_softmax_online.default](args = (%where, -1), kwargs = {})
#   return %getitem_108,%getitem_109
triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1 = async_compile.triton('triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 64}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*i1', 'in_ptr1': '*fp32', 'out_ptr0': '*fp32', 'out_ptr1': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 10, 'num_store': 2, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 960}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1(in_ptr0, in_ptr1, out_ptr0, out_ptr1, xnumel, XBLOCK : tl.constexpr):
    xnumel = 60
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 5)
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (1024*x0), xmask, eviction_policy='evict_last').to(tl.int1)
    tmp2 = tl.load(in_ptr1 + (5*x2), xmask, eviction_policy='evict_last')
    tmp7 = tl.load(in_ptr0 + (1 + 1024*x0), xmask, eviction_policy='evict_last').to(tl.int1)
    tmp9 = tl.load(in_ptr1 + (1 + 5*x2), xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr0 + (2 + 1024*x0), xmask, eviction_policy='evict_last').to(tl.int1)
    tmp15 = tl.load(in_ptr1 + (2 + 5*x2), xmask, eviction_policy='evict_last')
    tmp19 = tl.load(in_ptr0 + (3 + 1024*x0), xmask, eviction_policy='evict_last').to(tl.int1)
    tmp21 = tl.load(in_ptr1 + (3 + 5*x2), xmask, eviction_policy='evict_last')
    tmp25 = tl.load(in_ptr0 + (4 + 1024*x0), xmask, eviction_policy='evict_last').to(tl.int1)
    tmp27 = tl.load(in_ptr1 + (4 + 5*x2), xmask, eviction_policy='evict_last')
    tmp1 = tmp0 == 0
    tmp3 = tl.full([1], 0.125, tl.float32)
    tmp4 = tmp2 * tmp3
    tmp5 = tl.full([1], -3.4028234663852886e+38, tl.float32)
    tmp6 = tl.where(tmp1, tmp5, tmp4)
    tmp8 = tmp7 == 0
    tmp10 = tmp9 * tmp3
    tmp11 = tl.where(tmp8, tmp5, tmp10)
    tmp12 = triton_helpers.maximum(tmp6, tmp11)
    tmp14 = tmp13 == 0
    tmp16 = tmp15 * tmp3
    tmp17 = tl.where(tmp14, tmp5, tmp16)
    tmp18 = triton_helpers.maximum(tmp12, tmp17)
    tmp20 = tmp19 == 0
    tmp22 = tmp21 * tmp3
    tmp23 = tl.where(tmp20, tmp5, tmp22)
    tmp24 = triton_helpers.maximum(tmp18, tmp23)
    tmp26 = tmp25 == 0
    tmp28 = tmp27 * tmp3
    tmp29 = tl.where(tmp26, tmp5, tmp28)
    tmp30 = triton_helpers.maximum(tmp24, tmp29)
    tmp31 = tmp6 - tmp30
    tmp32 = libdevice.exp(tmp31)
    tmp33 = tmp11 - tmp30
    tmp34 = libdevice.exp(tmp33)
    tmp35 = tmp32 + tmp34
    tmp36 = tmp17 - tmp30
    tmp37 = libdevice.exp(tmp36)
    tmp38 = tmp35 + tmp37
    tmp39 = tmp23 - tmp30
    tmp40 = libdevice.exp(tmp39)
    tmp41 = tmp38 + tmp40
    tmp42 = tmp29 - tmp30
    tmp43 = libdevice.exp(tmp42)
    tmp44 = tmp41 + tmp43
    tl.store(out_ptr0 + (x2), tmp30, xmask)
    tl.store(out_ptr1 + (x2), tmp44, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/ay/cayj5jv4ay4ykxlday7rtl5xbggh2k2syoltvbr7gewotb7grif7.py
# Topologically Sorted Source Nodes: [causal, invert, w_1, matmul, w, softmax], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
# Source node to ATen node mapping:
#   causal => slice_1, slice_2
#   invert => bitwise_not
#   matmul => view_7
#   softmax => div_1
#   w => div
#   w_1 => full_default_1, where
# Graph fragment:
#   %arg7_1 : Tensor "b8[1, 1, 1024, 1024][1048576, 1048576, 1024, 1]cuda:0" = PlaceHolder[target=arg7_1]
#   %bmm : Tensor "f32[12, 5, 5][25, 5, 1]cuda:0" = PlaceHolder[target=bmm]
#   %getitem_108 : Tensor "f32[1, 12, 5, 1][60, 5, 1, 60]cuda:0" = PlaceHolder[target=getitem_108]
#   %getitem_109 : Tensor "f32[1, 12, 5, 1][60, 5, 1, 60]cuda:0" = PlaceHolder[target=getitem_109]
#   %slice_1 : Tensor "b8[1, 1, 5, 1024][1048576, 1048576, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%arg7_1, 2, 0, 5), kwargs = {})
#   %slice_2 : Tensor "b8[1, 1, 5, 5][1048576, 1048576, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%slice_1, 3, 0, 5), kwargs = {})
#   %bitwise_not : Tensor "b8[1, 1, 5, 5][25, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.bitwise_not.default](args = (%slice_2,), kwargs = {})
#   %full_default_1 : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], -3.4028234663852886e+38), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %view_7 : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%bmm, [1, 12, 5, 5]), kwargs = {})
#   %div : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%view_7, 8.0), kwargs = {})
#   %where : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.where.self](args = (%bitwise_not, %full_default_1, %div), kwargs = {})
#   %sub_tensor_11 : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%where, %getitem_108), kwargs = {})
#   %exp_default_11 : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%sub_tensor_11,), kwargs = {})
#   %div_1 : Tensor "f32[1, 12, 5, 5][300, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%exp_default_11, %getitem_109), kwargs = {})
#   return %expand_2
triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2 = async_compile.triton('triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 512}, 
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*i1', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 4, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 3625}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, xnumel, XBLOCK : tl.constexpr):
    xnumel = 300
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 5)
    x1 = ((xindex // 5) % 5)
    x3 = xindex
    x4 = xindex // 5
    tmp0 = tl.load(in_ptr0 + (x0 + 1024*x1), xmask, eviction_policy='evict_last').to(tl.int1)
    tmp2 = tl.load(in_out_ptr0 + (x3), xmask)
    tmp7 = tl.load(in_ptr1 + (x4), xmask, eviction_policy='evict_last')
    tmp10 = tl.load(in_ptr2 + (x4), xmask, eviction_policy='evict_last')
    tmp1 = tmp0 == 0
    tmp3 = tl.full([1], 0.125, tl.float32)
    tmp4 = tmp2 * tmp3
    tmp5 = tl.full([1], -3.4028234663852886e+38, tl.float32)
    tmp6 = tl.where(tmp1, tmp5, tmp4)
    tmp8 = tmp6 - tmp7
    tmp9 = libdevice.exp(tmp8)
    tmp11 = (tmp9 / tmp10)
    tl.store(in_out_ptr0 + (x3), tmp11, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/it/cit63pwqywu5qdgwyaoufqs6yxh5b3pzfvrpqcn6knrmg34db2o6.py
# Topologically Sorted Source Nodes: [a, permute_3, contiguous], Original ATen: [aten.view, aten.permute, aten.clone]
# Source node to ATen node mapping:
#   a => view_10
#   contiguous => clone
#   permute_3 => permute_5
# Graph fragment:
#   %bmm_1 : Tensor "f32[12, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=bmm_1]
#   %view_10 : Tensor "f32[1, 12, 5, 64][3840, 320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%bmm_1, [1, 12, 5, 64]), kwargs = {})
#   %permute_5 : Tensor "f32[1, 5, 12, 64][3840, 64, 320, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%view_10, [0, 2, 1, 3]), kwargs = {})
#   %clone : Tensor "f32[1, 5, 12, 64][3840, 768, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%permute_5,), kwargs = {memory_format: torch.contiguous_format})
#   return %clone
triton_poi_fused_clone_permute_view_3 = async_compile.triton('triton_poi_fused_clone_permute_view_3', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 4096}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_clone_permute_view_3', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 46080}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_clone_permute_view_3(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 3840
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 64)
    x1 = ((xindex // 64) % 12)
    x2 = xindex // 768
    x3 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 64*x2 + 320*x1), xmask)
    tl.store(out_ptr0 + (x3), tmp0, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/2i/c2ilqo6yfgezvbq2pya34iniclz35xwmavaxk47t75b77iufrc5o.py
# Topologically Sorted Source Nodes: [embedding, cumsum, pos, embedding_1, x, linear_1, x_1, layer_norm_1], Original ATen: [aten.embedding, aten.cumsum, aten.sub, aten.add, aten.addmm, aten.view, aten.native_layer_norm]
# Source node to ATen node mapping:
#   cumsum => iota_default, mul_tensor, view_default
#   embedding => embedding
#   embedding_1 => embedding_1
#   layer_norm_1 => add_4, add_5, mul_2, mul_3, rsqrt_1, sub_3, var_mean_1
#   linear_1 => add_tensor_35, view_13
#   pos => sub
#   x => add
#   x_1 => add_3
# Graph fragment:
#   %arg0_1 : Tensor "i64[1, 5][5, 1]cuda:0" = PlaceHolder[target=arg0_1]
#   %arg1_1 : Tensor "f32[50257, 768][768, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %arg2_1 : Tensor "f32[1024, 768][768, 1]cuda:0" = PlaceHolder[target=arg2_1]
#   %arg9_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg9_1]
#   %mm_default_35 : Tensor "f32[5, 768][768, 1]cuda:0" = PlaceHolder[target=mm_default_35]
#   %add_3 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0" = PlaceHolder[target=add_3]
#   %getitem_6 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_6]
#   %buf14 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf14]
#   %arg10_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg10_1]
#   %arg11_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg11_1]
#   %embedding : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.embedding.default](args = (%arg1_1, %arg0_1), kwargs = {})
#   %iota_default : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.iota.default](args = (5,), kwargs = {start: 1, step: 1, dtype: torch.int64, device: cuda:0, requires_grad: False})
#   %mul_tensor : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%iota_default, 1), kwargs = {})
#   %view_default : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%mul_tensor, [1, 5]), kwargs = {})
#   %sub : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%expand_default, 1), kwargs = {})
#   %embedding_1 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.embedding.default](args = (%arg2_1, %sub), kwargs = {})
#   %add : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %embedding_1), kwargs = {})
#   %add_tensor_35 : Tensor "f32[5, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg9_1, %mm_default_35), kwargs = {})
#   %view_13 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_35, [1, 5, 768]), kwargs = {})
#   %add_3 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add, %view_13), kwargs = {})
#   %var_mean_1 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_3, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_3 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_3, %getitem_6), kwargs = {})
#   %add_4 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_5, 1e-05), kwargs = {})
#   %rsqrt_1 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_4,), kwargs = {})
#   %mul_2 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_3, %rsqrt_1), kwargs = {})
#   %mul_3 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_2, %arg10_1), kwargs = {})
#   %add_5 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_3, %arg11_1), kwargs = {})
#   return %add_3,%getitem_6,%buf14,%add_5
triton_per_fused_add_addmm_cumsum_embedding_native_layer_norm_sub_view_4 = async_compile.triton('triton_per_fused_add_addmm_cumsum_embedding_native_layer_norm_sub_view_4', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*i64', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_cumsum_embedding_native_layer_norm_sub_view_4', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 6, 'num_store': 2, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 25, 'r0_': 101376}}
)
@triton.jit
def triton_per_fused_add_addmm_cumsum_embedding_native_layer_norm_sub_view_4(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 768
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    roffset = r0_offset
    rindex = r0_index
    x0 = xindex
    r0_1 = r0_index
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp7 = tl.load(in_ptr2 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp9 = tl.load(in_ptr3 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp10 = tl.load(in_out_ptr0 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp36 = tl.load(in_ptr4 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp38 = tl.load(in_ptr5 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp1 = tl.full([1, 1], 50257, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < 50257)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 50257")
    tmp6 = tl.load(in_ptr1 + (r0_1 + 768*tmp4), r0_mask & xmask, other=0.0)
    tmp8 = tmp6 + tmp7
    tmp11 = tmp9 + tmp10
    tmp12 = tmp8 + tmp11
    tmp13 = tl.broadcast_to(tmp12, [XBLOCK, R0_BLOCK])
    tmp15 = tl.where(r0_mask & xmask, tmp13, 0)
    tmp16 = tl.broadcast_to(tmp13, [XBLOCK, R0_BLOCK])
    tmp18 = tl.where(r0_mask & xmask, tmp16, 0)
    tmp19 = tl.sum(tmp18, 1)[:, None].to(tl.float32)
    tmp20 = tl.full([1, 1], 768, tl.int32)
    tmp21 = tmp20.to(tl.float32)
    tmp22 = (tmp19 / tmp21)
    tmp23 = tmp13 - tmp22
    tmp24 = tmp23 * tmp23
    tmp25 = tl.broadcast_to(tmp24, [XBLOCK, R0_BLOCK])
    tmp27 = tl.where(r0_mask & xmask, tmp25, 0)
    tmp28 = tl.sum(tmp27, 1)[:, None].to(tl.float32)
    tmp29 = tmp12 - tmp22
    tmp30 = tl.full([1, 1], 768.0, tl.float32)
    tmp31 = (tmp28 / tmp30)
    tmp32 = tl.full([1, 1], 1e-05, tl.float32)
    tmp33 = tmp31 + tmp32
    tmp34 = libdevice.rsqrt(tmp33)
    tmp35 = tmp29 * tmp34
    tmp37 = tmp35 * tmp36
    tmp39 = tmp37 + tmp38
    tl.store(in_out_ptr0 + (r0_1 + 768*x0), tmp12, r0_mask & xmask)
    tl.store(out_ptr2 + (r0_1 + 768*x0), tmp39, r0_mask & xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/ra/cratix5xuql3k6s6brw2hkw45wpykpsnehrpzuatngdfatafefq5.py
# Topologically Sorted Source Nodes: [linear_2, mul, pow_1, mul_1, add_2, mul_2, tanh, add_3, mul_3], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
# Source node to ATen node mapping:
#   add_2 => add_6
#   add_3 => add_7
#   linear_2 => add_tensor_34, view_15
#   mul => mul_4
#   mul_1 => mul_5
#   mul_2 => mul_6
#   mul_3 => mul_7
#   pow_1 => pow_1
#   tanh => tanh
# Graph fragment:
#   %arg13_1 : Tensor "f32[3072][1]cuda:0" = PlaceHolder[target=arg13_1]
#   %mm_default_34 : Tensor "f32[5, 3072][3072, 1]cuda:0" = PlaceHolder[target=mm_default_34]
#   %add_tensor_34 : Tensor "f32[5, 3072][3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg13_1, %mm_default_34), kwargs = {})
#   %view_15 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_34, [1, 5, 3072]), kwargs = {})
#   %mul_4 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.5), kwargs = {})
#   %pow_1 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.pow.Tensor_Scalar](args = (%view_15, 3.0), kwargs = {})
#   %mul_5 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%pow_1, 0.044715), kwargs = {})
#   %add_6 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_15, %mul_5), kwargs = {})
#   %mul_6 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_6, 0.7978845608028654), kwargs = {})
#   %tanh : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.tanh.default](args = (%mul_6,), kwargs = {})
#   %add_7 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%tanh, 1.0), kwargs = {})
#   %mul_7 : Tensor "f32[1, 5, 3072][15360, 3072, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_4, %add_7), kwargs = {})
#   return %mul_7
triton_poi_fused_add_addmm_mul_pow_tanh_view_5 = async_compile.triton('triton_poi_fused_add_addmm_mul_pow_tanh_view_5', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 16384}, 
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_add_addmm_mul_pow_tanh_view_5', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 196608}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_add_addmm_mul_pow_tanh_view_5(in_out_ptr0, in_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 15360
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 3072)
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + (x2), xmask)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0.5, tl.float32)
    tmp4 = tmp2 * tmp3
    tmp5 = tmp2 * tmp2
    tmp6 = tmp5 * tmp2
    tmp7 = tl.full([1], 0.044715, tl.float32)
    tmp8 = tmp6 * tmp7
    tmp9 = tmp2 + tmp8
    tmp10 = tl.full([1], 0.7978845608028654, tl.float32)
    tmp11 = tmp9 * tmp10
    tmp12 = libdevice.tanh(tmp11)
    tmp13 = tl.full([1], 1.0, tl.float32)
    tmp14 = tmp12 + tmp13
    tmp15 = tmp4 * tmp14
    tl.store(in_out_ptr0 + (x2), tmp15, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/eb/cebzdmgkgdwkxis4vjd3urpmndyo4o63ystnewg7h372wqzyr2jx.py
# Topologically Sorted Source Nodes: [linear_3, x_2, layer_norm_2], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   layer_norm_2 => add_10, add_9, mul_8, mul_9, rsqrt_2, sub_4, var_mean_2
#   linear_3 => add_tensor_33, view_17
#   x_2 => add_8
# Graph fragment:
#   %add_3 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0" = PlaceHolder[target=add_3]
#   %arg15_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg15_1]
#   %mm_default_33 : Tensor "f32[5, 768][768, 1]cuda:0" = PlaceHolder[target=mm_default_33]
#   %getitem_8 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_8]
#   %buf21 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf21]
#   %arg16_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg16_1]
#   %arg17_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg17_1]
#   %add_tensor_33 : Tensor "f32[5, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg15_1, %mm_default_33), kwargs = {})
#   %view_17 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_33, [1, 5, 768]), kwargs = {})
#   %add_8 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_3, %view_17), kwargs = {})
#   %var_mean_2 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_8, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_4 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_8, %getitem_8), kwargs = {})
#   %add_9 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_7, 1e-05), kwargs = {})
#   %rsqrt_2 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_9,), kwargs = {})
#   %mul_8 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_4, %rsqrt_2), kwargs = {})
#   %mul_9 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_8, %arg16_1), kwargs = {})
#   %add_10 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_9, %arg17_1), kwargs = {})
#   return %getitem_8,%buf21,%add_10
triton_per_fused_add_addmm_native_layer_norm_view_6 = async_compile.triton('triton_per_fused_add_addmm_native_layer_norm_view_6', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_native_layer_norm_view_6', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 5, 'num_store': 1, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 70656}}
)
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_6(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 768
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.load(in_ptr1 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp2 = tl.load(in_ptr2 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp28 = tl.load(in_ptr3 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp30 = tl.load(in_ptr4 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp3 = tmp1 + tmp2
    tmp4 = tmp0 + tmp3
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.where(r0_mask & xmask, tmp5, 0)
    tmp8 = tl.broadcast_to(tmp5, [XBLOCK, R0_BLOCK])
    tmp10 = tl.where(r0_mask & xmask, tmp8, 0)
    tmp11 = tl.sum(tmp10, 1)[:, None].to(tl.float32)
    tmp12 = tl.full([1, 1], 768, tl.int32)
    tmp13 = tmp12.to(tl.float32)
    tmp14 = (tmp11 / tmp13)
    tmp15 = tmp5 - tmp14
    tmp16 = tmp15 * tmp15
    tmp17 = tl.broadcast_to(tmp16, [XBLOCK, R0_BLOCK])
    tmp19 = tl.where(r0_mask & xmask, tmp17, 0)
    tmp20 = tl.sum(tmp19, 1)[:, None].to(tl.float32)
    tmp21 = tmp4 - tmp14
    tmp22 = tl.full([1, 1], 768.0, tl.float32)
    tmp23 = (tmp20 / tmp22)
    tmp24 = tl.full([1, 1], 1e-05, tl.float32)
    tmp25 = tmp23 + tmp24
    tmp26 = libdevice.rsqrt(tmp25)
    tmp27 = tmp21 * tmp26
    tmp29 = tmp27 * tmp28
    tmp31 = tmp29 + tmp30
    tl.store(out_ptr2 + (r0_1 + 768*x0), tmp31, r0_mask & xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/3c/c3ct6hj3gvfqvoytuzcc6jlzsu5o7jyv3jta65dk3pwp6ujyezzz.py
# Topologically Sorted Source Nodes: [linear_3, x_2, linear_5, x_3, layer_norm_3], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   layer_norm_3 => add_12, add_13, mul_10, mul_11, rsqrt_3, sub_6, var_mean_3
#   linear_3 => add_tensor_33, view_17
#   linear_5 => add_tensor_32, view_31
#   x_2 => add_8
#   x_3 => add_11
# Graph fragment:
#   %add_3 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0" = PlaceHolder[target=add_3]
#   %arg15_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg15_1]
#   %mm_default_33 : Tensor "f32[5, 768][768, 1]cuda:0" = PlaceHolder[target=mm_default_33]
#   %arg22_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg22_1]
#   %mm_default_32 : Tensor "f32[5, 768][768, 1]cuda:0" = PlaceHolder[target=mm_default_32]
#   %add_11 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0" = PlaceHolder[target=add_11]
#   %getitem_13 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_13]
#   %buf34 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf34]
#   %arg23_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg23_1]
#   %arg24_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg24_1]
#   %add_tensor_33 : Tensor "f32[5, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg15_1, %mm_default_33), kwargs = {})
#   %view_17 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_33, [1, 5, 768]), kwargs = {})
#   %add_8 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_3, %view_17), kwargs = {})
#   %add_tensor_32 : Tensor "f32[5, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg22_1, %mm_default_32), kwargs = {})
#   %view_31 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_32, [1, 5, 768]), kwargs = {})
#   %add_11 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_8, %view_31), kwargs = {})
#   %var_mean_3 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_11, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_6 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_11, %getitem_13), kwargs = {})
#   %add_12 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_12, 1e-05), kwargs = {})
#   %rsqrt_3 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_12,), kwargs = {})
#   %mul_10 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_6, %rsqrt_3), kwargs = {})
#   %mul_11 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_10, %arg23_1), kwargs = {})
#   %add_13 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_11, %arg24_1), kwargs = {})
#   return %add_11,%getitem_13,%buf34,%add_13
triton_per_fused_add_addmm_native_layer_norm_view_7 = async_compile.triton('triton_per_fused_add_addmm_native_layer_norm_view_7', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_native_layer_norm_view_7', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 7, 'num_store': 2, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 119808}}
)
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_7(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 768
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_out_ptr0 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.load(in_ptr0 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp2 = tl.load(in_ptr1 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp5 = tl.load(in_ptr2 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp6 = tl.load(in_ptr3 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp32 = tl.load(in_ptr4 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp34 = tl.load(in_ptr5 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp3 = tmp1 + tmp2
    tmp4 = tmp0 + tmp3
    tmp7 = tmp5 + tmp6
    tmp8 = tmp4 + tmp7
    tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
    tmp11 = tl.where(r0_mask & xmask, tmp9, 0)
    tmp12 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp14 = tl.where(r0_mask & xmask, tmp12, 0)
    tmp15 = tl.sum(tmp14, 1)[:, None].to(tl.float32)
    tmp16 = tl.full([1, 1], 768, tl.int32)
    tmp17 = tmp16.to(tl.float32)
    tmp18 = (tmp15 / tmp17)
    tmp19 = tmp9 - tmp18
    tmp20 = tmp19 * tmp19
    tmp21 = tl.broadcast_to(tmp20, [XBLOCK, R0_BLOCK])
    tmp23 = tl.where(r0_mask & xmask, tmp21, 0)
    tmp24 = tl.sum(tmp23, 1)[:, None].to(tl.float32)
    tmp25 = tmp8 - tmp18
    tmp26 = tl.full([1, 1], 768.0, tl.float32)
    tmp27 = (tmp24 / tmp26)
    tmp28 = tl.full([1, 1], 1e-05, tl.float32)
    tmp29 = tmp27 + tmp28
    tmp30 = libdevice.rsqrt(tmp29)
    tmp31 = tmp25 * tmp30
    tmp33 = tmp31 * tmp32
    tmp35 = tmp33 + tmp34
    tl.store(in_out_ptr0 + (r0_1 + 768*x0), tmp8, r0_mask & xmask)
    tl.store(out_ptr2 + (r0_1 + 768*x0), tmp35, r0_mask & xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-7yyy2bvj/capture/inductor/cache/pn/cpnckhq6mkj4h3piivq7jjkddgv3t2r3ivzn6ws72v6mlnt5ooee.py
# Topologically Sorted Source Nodes: [linear_47, x_24, layer_norm_24], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   layer_norm_24 => add_97, add_98, mul_96, mul_97, rsqrt_24, sub_37, var_mean_24
#   linear_47 => add_tensor, view_215
#   x_24 => add_96
# Graph fragment:
#   %add_91 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0" = PlaceHolder[target=add_91]
#   %arg158_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg158_1]
#   %mm_default : Tensor "f32[5, 768][768, 1]cuda:0" = PlaceHolder[target=mm_default]
#   %getitem_85 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_85]
#   %buf241 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf241]
#   %arg159_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg159_1]
#   %arg160_1 : Tensor "f32[768][1]cuda:0" = PlaceHolder[target=arg160_1]
#   %add_tensor : Tensor "f32[5, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg158_1, %mm_default), kwargs = {})
#   %view_215 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor, [1, 5, 768]), kwargs = {})
#   %add_96 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_91, %view_215), kwargs = {})
#   %var_mean_24 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_96, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_37 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_96, %getitem_85), kwargs = {})
#   %add_97 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_84, 1e-05), kwargs = {})
#   %rsqrt_24 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_97,), kwargs = {})
#   %mul_96 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_37, %rsqrt_24), kwargs = {})
#   %mul_97 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_96, %arg159_1), kwargs = {})
#   %add_98 : Tensor "f32[1, 5, 768][3840, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_97, %arg160_1), kwargs = {})
#   return %getitem_85,%buf241,%add_98
triton_per_fused_add_addmm_native_layer_norm_view_8 = async_compile.triton('triton_per_fused_add_addmm_native_layer_norm_view_8', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 1024},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_native_layer_norm_view_8', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 5, 'num_store': 1, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 70656}}
)
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_8(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 768
    R0_BLOCK: tl.constexpr = 1024
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = r0_index < r0_numel
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_out_ptr0 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp1 = tl.load(in_ptr0 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp2 = tl.load(in_ptr1 + (r0_1 + 768*x0), r0_mask & xmask, other=0.0)
    tmp28 = tl.load(in_ptr2 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp30 = tl.load(in_ptr3 + (r0_1), r0_mask, eviction_policy='evict_last', other=0.0)
    tmp3 = tmp1 + tmp2
    tmp4 = tmp0 + tmp3
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.where(r0_mask & xmask, tmp5, 0)
    tmp8 = tl.broadcast_to(tmp5, [XBLOCK, R0_BLOCK])
    tmp10 = tl.where(r0_mask & xmask, tmp8, 0)
    tmp11 = tl.sum(tmp10, 1)[:, None].to(tl.float32)
    tmp12 = tl.full([1, 1], 768, tl.int32)
    tmp13 = tmp12.to(tl.float32)
    tmp14 = (tmp11 / tmp13)
    tmp15 = tmp5 - tmp14
    tmp16 = tmp15 * tmp15
    tmp17 = tl.broadcast_to(tmp16, [XBLOCK, R0_BLOCK])
    tmp19 = tl.where(r0_mask & xmask, tmp17, 0)
    tmp20 = tl.sum(tmp19, 1)[:, None].to(tl.float32)
    tmp21 = tmp4 - tmp14
    tmp22 = tl.full([1, 1], 768.0, tl.float32)
    tmp23 = (tmp20 / tmp22)
    tmp24 = tl.full([1, 1], 1e-05, tl.float32)
    tmp25 = tmp23 + tmp24
    tmp26 = libdevice.rsqrt(tmp25)
    tmp27 = tmp21 * tmp26
    tmp29 = tmp27 * tmp28
    tmp31 = tmp29 + tmp30
    tl.store(in_out_ptr0 + (r0_1 + 768*x0), tmp31, r0_mask & xmask)
''', device_str='cuda')


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1, arg31_1, arg32_1, arg33_1, arg34_1, arg35_1, arg36_1, arg37_1, arg38_1, arg39_1, arg40_1, arg41_1, arg42_1, arg43_1, arg44_1, arg45_1, arg46_1, arg47_1, arg48_1, arg49_1, arg50_1, arg51_1, arg52_1, arg53_1, arg54_1, arg55_1, arg56_1, arg57_1, arg58_1, arg59_1, arg60_1, arg61_1, arg62_1, arg63_1, arg64_1, arg65_1, arg66_1, arg67_1, arg68_1, arg69_1, arg70_1, arg71_1, arg72_1, arg73_1, arg74_1, arg75_1, arg76_1, arg77_1, arg78_1, arg79_1, arg80_1, arg81_1, arg82_1, arg83_1, arg84_1, arg85_1, arg86_1, arg87_1, arg88_1, arg89_1, arg90_1, arg91_1, arg92_1, arg93_1, arg94_1, arg95_1, arg96_1, arg97_1, arg98_1, arg99_1, arg100_1, arg101_1, arg102_1, arg103_1, arg104_1, arg105_1, arg106_1, arg107_1, arg108_1, arg109_1, arg110_1, arg111_1, arg112_1, arg113_1, arg114_1, arg115_1, arg116_1, arg117_1, arg118_1, arg119_1, arg120_1, arg121_1, arg122_1, arg123_1, arg124_1, arg125_1, arg126_1, arg127_1, arg128_1, arg129_1, arg130_1, arg131_1, arg132_1, arg133_1, arg134_1, arg135_1, arg136_1, arg137_1, arg138_1, arg139_1, arg140_1, arg141_1, arg142_1, arg143_1, arg144_1, arg145_1, arg146_1, arg147_1, arg148_1, arg149_1, arg150_1, arg151_1, arg152_1, arg153_1, arg154_1, arg155_1, arg156_1, arg157_1, arg158_1, arg159_1, arg160_1 = args
        args.clear()
        assert_size_stride(arg0_1, (1, 5), (5, 1))
        assert_size_stride(arg1_1, (50257, 768), (768, 1))
        assert_size_stride(arg2_1, (1024, 768), (768, 1))
        assert_size_stride(arg3_1, (768, ), (1, ))
        assert_size_stride(arg4_1, (768, ), (1, ))
        assert_size_stride(arg5_1, (2304, 768), (768, 1))
        assert_size_stride(arg6_1, (2304, ), (1, ))
        assert_size_stride(arg7_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg8_1, (768, 768), (768, 1))
        assert_size_stride(arg9_1, (768, ), (1, ))
        assert_size_stride(arg10_1, (768, ), (1, ))
        assert_size_stride(arg11_1, (768, ), (1, ))
        assert_size_stride(arg12_1, (3072, 768), (768, 1))
        assert_size_stride(arg13_1, (3072, ), (1, ))
        assert_size_stride(arg14_1, (768, 3072), (3072, 1))
        assert_size_stride(arg15_1, (768, ), (1, ))
        assert_size_stride(arg16_1, (768, ), (1, ))
        assert_size_stride(arg17_1, (768, ), (1, ))
        assert_size_stride(arg18_1, (2304, 768), (768, 1))
        assert_size_stride(arg19_1, (2304, ), (1, ))
        assert_size_stride(arg20_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg21_1, (768, 768), (768, 1))
        assert_size_stride(arg22_1, (768, ), (1, ))
        assert_size_stride(arg23_1, (768, ), (1, ))
        assert_size_stride(arg24_1, (768, ), (1, ))
        assert_size_stride(arg25_1, (3072, 768), (768, 1))
        assert_size_stride(arg26_1, (3072, ), (1, ))
        assert_size_stride(arg27_1, (768, 3072), (3072, 1))
        assert_size_stride(arg28_1, (768, ), (1, ))
        assert_size_stride(arg29_1, (768, ), (1, ))
        assert_size_stride(arg30_1, (768, ), (1, ))
        assert_size_stride(arg31_1, (2304, 768), (768, 1))
        assert_size_stride(arg32_1, (2304, ), (1, ))
        assert_size_stride(arg33_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg34_1, (768, 768), (768, 1))
        assert_size_stride(arg35_1, (768, ), (1, ))
        assert_size_stride(arg36_1, (768, ), (1, ))
        assert_size_stride(arg37_1, (768, ), (1, ))
        assert_size_stride(arg38_1, (3072, 768), (768, 1))
        assert_size_stride(arg39_1, (3072, ), (1, ))
        assert_size_stride(arg40_1, (768, 3072), (3072, 1))
        assert_size_stride(arg41_1, (768, ), (1, ))
        assert_size_stride(arg42_1, (768, ), (1, ))
        assert_size_stride(arg43_1, (768, ), (1, ))
        assert_size_stride(arg44_1, (2304, 768), (768, 1))
        assert_size_stride(arg45_1, (2304, ), (1, ))
        assert_size_stride(arg46_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg47_1, (768, 768), (768, 1))
        assert_size_stride(arg48_1, (768, ), (1, ))
        assert_size_stride(arg49_1, (768, ), (1, ))
        assert_size_stride(arg50_1, (768, ), (1, ))
        assert_size_stride(arg51_1, (3072, 768), (768, 1))
        assert_size_stride(arg52_1, (3072, ), (1, ))
        assert_size_stride(arg53_1, (768, 3072), (3072, 1))
        assert_size_stride(arg54_1, (768, ), (1, ))
        assert_size_stride(arg55_1, (768, ), (1, ))
        assert_size_stride(arg56_1, (768, ), (1, ))
        assert_size_stride(arg57_1, (2304, 768), (768, 1))
        assert_size_stride(arg58_1, (2304, ), (1, ))
        assert_size_stride(arg59_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg60_1, (768, 768), (768, 1))
        assert_size_stride(arg61_1, (768, ), (1, ))
        assert_size_stride(arg62_1, (768, ), (1, ))
        assert_size_stride(arg63_1, (768, ), (1, ))
        assert_size_stride(arg64_1, (3072, 768), (768, 1))
        assert_size_stride(arg65_1, (3072, ), (1, ))
        assert_size_stride(arg66_1, (768, 3072), (3072, 1))
        assert_size_stride(arg67_1, (768, ), (1, ))
        assert_size_stride(arg68_1, (768, ), (1, ))
        assert_size_stride(arg69_1, (768, ), (1, ))
        assert_size_stride(arg70_1, (2304, 768), (768, 1))
        assert_size_stride(arg71_1, (2304, ), (1, ))
        assert_size_stride(arg72_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg73_1, (768, 768), (768, 1))
        assert_size_stride(arg74_1, (768, ), (1, ))
        assert_size_stride(arg75_1, (768, ), (1, ))
        assert_size_stride(arg76_1, (768, ), (1, ))
        assert_size_stride(arg77_1, (3072, 768), (768, 1))
        assert_size_stride(arg78_1, (3072, ), (1, ))
        assert_size_stride(arg79_1, (768, 3072), (3072, 1))
        assert_size_stride(arg80_1, (768, ), (1, ))
        assert_size_stride(arg81_1, (768, ), (1, ))
        assert_size_stride(arg82_1, (768, ), (1, ))
        assert_size_stride(arg83_1, (2304, 768), (768, 1))
        assert_size_stride(arg84_1, (2304, ), (1, ))
        assert_size_stride(arg85_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg86_1, (768, 768), (768, 1))
        assert_size_stride(arg87_1, (768, ), (1, ))
        assert_size_stride(arg88_1, (768, ), (1, ))
        assert_size_stride(arg89_1, (768, ), (1, ))
        assert_size_stride(arg90_1, (3072, 768), (768, 1))
        assert_size_stride(arg91_1, (3072, ), (1, ))
        assert_size_stride(arg92_1, (768, 3072), (3072, 1))
        assert_size_stride(arg93_1, (768, ), (1, ))
        assert_size_stride(arg94_1, (768, ), (1, ))
        assert_size_stride(arg95_1, (768, ), (1, ))
        assert_size_stride(arg96_1, (2304, 768), (768, 1))
        assert_size_stride(arg97_1, (2304, ), (1, ))
        assert_size_stride(arg98_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg99_1, (768, 768), (768, 1))
        assert_size_stride(arg100_1, (768, ), (1, ))
        assert_size_stride(arg101_1, (768, ), (1, ))
        assert_size_stride(arg102_1, (768, ), (1, ))
        assert_size_stride(arg103_1, (3072, 768), (768, 1))
        assert_size_stride(arg104_1, (3072, ), (1, ))
        assert_size_stride(arg105_1, (768, 3072), (3072, 1))
        assert_size_stride(arg106_1, (768, ), (1, ))
        assert_size_stride(arg107_1, (768, ), (1, ))
        assert_size_stride(arg108_1, (768, ), (1, ))
        assert_size_stride(arg109_1, (2304, 768), (768, 1))
        assert_size_stride(arg110_1, (2304, ), (1, ))
        assert_size_stride(arg111_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg112_1, (768, 768), (768, 1))
        assert_size_stride(arg113_1, (768, ), (1, ))
        assert_size_stride(arg114_1, (768, ), (1, ))
        assert_size_stride(arg115_1, (768, ), (1, ))
        assert_size_stride(arg116_1, (3072, 768), (768, 1))
        assert_size_stride(arg117_1, (3072, ), (1, ))
        assert_size_stride(arg118_1, (768, 3072), (3072, 1))
        assert_size_stride(arg119_1, (768, ), (1, ))
        assert_size_stride(arg120_1, (768, ), (1, ))
        assert_size_stride(arg121_1, (768, ), (1, ))
        assert_size_stride(arg122_1, (2304, 768), (768, 1))
        assert_size_stride(arg123_1, (2304, ), (1, ))
        assert_size_stride(arg124_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg125_1, (768, 768), (768, 1))
        assert_size_stride(arg126_1, (768, ), (1, ))
        assert_size_stride(arg127_1, (768, ), (1, ))
        assert_size_stride(arg128_1, (768, ), (1, ))
        assert_size_stride(arg129_1, (3072, 768), (768, 1))
        assert_size_stride(arg130_1, (3072, ), (1, ))
        assert_size_stride(arg131_1, (768, 3072), (3072, 1))
        assert_size_stride(arg132_1, (768, ), (1, ))
        assert_size_stride(arg133_1, (768, ), (1, ))
        assert_size_stride(arg134_1, (768, ), (1, ))
        assert_size_stride(arg135_1, (2304, 768), (768, 1))
        assert_size_stride(arg136_1, (2304, ), (1, ))
        assert_size_stride(arg137_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg138_1, (768, 768), (768, 1))
        assert_size_stride(arg139_1, (768, ), (1, ))
        assert_size_stride(arg140_1, (768, ), (1, ))
        assert_size_stride(arg141_1, (768, ), (1, ))
        assert_size_stride(arg142_1, (3072, 768), (768, 1))
        assert_size_stride(arg143_1, (3072, ), (1, ))
        assert_size_stride(arg144_1, (768, 3072), (3072, 1))
        assert_size_stride(arg145_1, (768, ), (1, ))
        assert_size_stride(arg146_1, (768, ), (1, ))
        assert_size_stride(arg147_1, (768, ), (1, ))
        assert_size_stride(arg148_1, (2304, 768), (768, 1))
        assert_size_stride(arg149_1, (2304, ), (1, ))
        assert_size_stride(arg150_1, (1, 1, 1024, 1024), (1048576, 1048576, 1024, 1))
        assert_size_stride(arg151_1, (768, 768), (768, 1))
        assert_size_stride(arg152_1, (768, ), (1, ))
        assert_size_stride(arg153_1, (768, ), (1, ))
        assert_size_stride(arg154_1, (768, ), (1, ))
        assert_size_stride(arg155_1, (3072, 768), (768, 1))
        assert_size_stride(arg156_1, (3072, ), (1, ))
        assert_size_stride(arg157_1, (768, 3072), (3072, 1))
        assert_size_stride(arg158_1, (768, ), (1, ))
        assert_size_stride(arg159_1, (768, ), (1, ))
        assert_size_stride(arg160_1, (768, ), (1, ))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf3 = empty_strided_cuda((1, 5, 768), (3840, 768, 1), torch.float32)
            # Topologically Sorted Source Nodes: [embedding, cumsum, pos, embedding_1, x, layer_norm], Original ATen: [aten.embedding, aten.cumsum, aten.sub, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_red_fused_add_cumsum_embedding_native_layer_norm_sub_0.run(arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, buf3, 5, 768, stream=stream0)
            del arg3_1
            del arg4_1
            buf4 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [embedding, cumsum, pos, embedding_1, x, layer_norm, linear], Original ATen: [aten.embedding, aten.cumsum, aten.sub, aten.add, aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.addmm(arg6_1, reinterpret_tensor(buf3, (5, 768), (768, 1), 0), reinterpret_tensor(arg5_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf4)
            del arg5_1
            del arg6_1
            buf5 = empty_strided_cuda((12, 5, 5), (25, 5, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear, split, view, q_1, matmul, view_1, k_1, transpose], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf4, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf4, (12, 64, 5), (64, 1, 2304), 768), out=buf5)
            buf6 = empty_strided_cuda((1, 12, 5, 1), (60, 5, 1, 60), torch.float32)
            buf7 = empty_strided_cuda((1, 12, 5, 1), (60, 5, 1, 60), torch.float32)
            # Topologically Sorted Source Nodes: [causal, invert, w_1, matmul, w], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg7_1, buf5, buf6, buf7, 60, stream=stream0)
            buf8 = reinterpret_tensor(buf5, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf5  # reuse
            # Topologically Sorted Source Nodes: [causal, invert, w_1, matmul, w, softmax], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf8, arg7_1, buf6, buf7, 300, stream=stream0)
            del arg7_1
            buf9 = reinterpret_tensor(buf3, (12, 5, 64), (320, 64, 1), 0); del buf3  # reuse
            # Topologically Sorted Source Nodes: [linear, split, causal, invert, w_1, matmul, w, softmax, a, view_2, v_1], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf8, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf4, (12, 5, 64), (64, 2304, 1), 1536), out=buf9)
            del buf4
            buf10 = empty_strided_cuda((1, 5, 12, 64), (3840, 768, 64, 1), torch.float32)
            # Topologically Sorted Source Nodes: [a, permute_3, contiguous], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf9, buf10, 3840, stream=stream0)
            buf11 = reinterpret_tensor(buf9, (5, 768), (768, 1), 0); del buf9  # reuse
            # Topologically Sorted Source Nodes: [a, permute_3, contiguous, a_1, linear_1], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf10, (5, 768), (768, 1), 0), reinterpret_tensor(arg8_1, (768, 768), (1, 768), 0), out=buf11)
            del arg8_1
            buf12 = reinterpret_tensor(buf11, (1, 5, 768), (3840, 768, 1), 0); del buf11  # reuse
            buf16 = reinterpret_tensor(buf10, (1, 5, 768), (3840, 768, 1), 0); del buf10  # reuse
            # Topologically Sorted Source Nodes: [embedding, cumsum, pos, embedding_1, x, linear_1, x_1, layer_norm_1], Original ATen: [aten.embedding, aten.cumsum, aten.sub, aten.add, aten.addmm, aten.view, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_cumsum_embedding_native_layer_norm_sub_view_4.run(buf12, arg0_1, arg1_1, arg2_1, arg9_1, arg10_1, arg11_1, buf16, 5, 768, stream=stream0)
            del arg0_1
            del arg10_1
            del arg11_1
            del arg2_1
            del arg9_1
            buf17 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_1, linear_2], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf16, (5, 768), (768, 1), 0), reinterpret_tensor(arg12_1, (768, 3072), (1, 768), 0), out=buf17)
            del arg12_1
            buf18 = reinterpret_tensor(buf17, (1, 5, 3072), (15360, 3072, 1), 0); del buf17  # reuse
            # Topologically Sorted Source Nodes: [linear_2, mul, pow_1, mul_1, add_2, mul_2, tanh, add_3, mul_3], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf18, arg13_1, 15360, stream=stream0)
            del arg13_1
            buf19 = reinterpret_tensor(buf16, (5, 768), (768, 1), 0); del buf16  # reuse
            # Topologically Sorted Source Nodes: [linear_2, mul, pow_1, mul_1, add_2, mul_2, tanh, add_3, mul_3, linear_3], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf18, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg14_1, (3072, 768), (1, 3072), 0), out=buf19)
            del arg14_1
            del buf18
            buf23 = empty_strided_cuda((1, 5, 768), (3840, 768, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_3, x_2, layer_norm_2], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf12, arg15_1, buf19, arg16_1, arg17_1, buf23, 5, 768, stream=stream0)
            del arg16_1
            del arg17_1
            buf24 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_3, x_2, layer_norm_2, linear_4], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg19_1, reinterpret_tensor(buf23, (5, 768), (768, 1), 0), reinterpret_tensor(arg18_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf24)
            del arg18_1
            del arg19_1
            buf25 = reinterpret_tensor(buf8, (12, 5, 5), (25, 5, 1), 0); del buf8  # reuse
            # Topologically Sorted Source Nodes: [linear_4, split_1, view_4, q_3, matmul_2, view_5, k_3, transpose_1], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf24, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf24, (12, 64, 5), (64, 1, 2304), 768), out=buf25)
            buf26 = buf7; del buf7  # reuse
            buf27 = buf6; del buf6  # reuse
            # Topologically Sorted Source Nodes: [causal_1, invert_1, w_3, matmul_2, w_2], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg20_1, buf25, buf26, buf27, 60, stream=stream0)
            buf28 = reinterpret_tensor(buf25, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf25  # reuse
            # Topologically Sorted Source Nodes: [causal_1, invert_1, w_3, matmul_2, w_2, softmax_1], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf28, arg20_1, buf26, buf27, 300, stream=stream0)
            del arg20_1
            buf29 = reinterpret_tensor(buf23, (12, 5, 64), (320, 64, 1), 0); del buf23  # reuse
            # Topologically Sorted Source Nodes: [linear_4, split_1, causal_1, invert_1, w_3, matmul_2, w_2, softmax_1, a_2, view_6, v_3], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf28, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf24, (12, 5, 64), (64, 2304, 1), 1536), out=buf29)
            del buf24
            buf30 = empty_strided_cuda((1, 5, 12, 64), (3840, 768, 64, 1), torch.float32)
            # Topologically Sorted Source Nodes: [a_2, permute_7, contiguous_1], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf29, buf30, 3840, stream=stream0)
            buf31 = reinterpret_tensor(buf29, (5, 768), (768, 1), 0); del buf29  # reuse
            # Topologically Sorted Source Nodes: [a_2, permute_7, contiguous_1, a_3, linear_5], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf30, (5, 768), (768, 1), 0), reinterpret_tensor(arg21_1, (768, 768), (1, 768), 0), out=buf31)
            del arg21_1
            buf32 = buf12; del buf12  # reuse
            buf36 = reinterpret_tensor(buf30, (1, 5, 768), (3840, 768, 1), 0); del buf30  # reuse
            # Topologically Sorted Source Nodes: [linear_3, x_2, linear_5, x_3, layer_norm_3], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf32, arg15_1, buf19, arg22_1, buf31, arg23_1, arg24_1, buf36, 5, 768, stream=stream0)
            del arg15_1
            del arg22_1
            del arg23_1
            del arg24_1
            buf37 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_3, linear_6], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf36, (5, 768), (768, 1), 0), reinterpret_tensor(arg25_1, (768, 3072), (1, 768), 0), out=buf37)
            del arg25_1
            buf38 = reinterpret_tensor(buf37, (1, 5, 3072), (15360, 3072, 1), 0); del buf37  # reuse
            # Topologically Sorted Source Nodes: [linear_6, mul_4, pow_2, mul_5, add_6, mul_6, tanh_1, add_7, mul_7], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf38, arg26_1, 15360, stream=stream0)
            del arg26_1
            buf39 = reinterpret_tensor(buf36, (5, 768), (768, 1), 0); del buf36  # reuse
            # Topologically Sorted Source Nodes: [linear_6, mul_4, pow_2, mul_5, add_6, mul_6, tanh_1, add_7, mul_7, linear_7], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf38, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg27_1, (3072, 768), (1, 3072), 0), out=buf39)
            del arg27_1
            del buf38
            buf43 = reinterpret_tensor(buf31, (1, 5, 768), (3840, 768, 1), 0); del buf31  # reuse
            # Topologically Sorted Source Nodes: [linear_7, x_4, layer_norm_4], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf32, arg28_1, buf39, arg29_1, arg30_1, buf43, 5, 768, stream=stream0)
            del arg29_1
            del arg30_1
            buf44 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_7, x_4, layer_norm_4, linear_8], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg32_1, reinterpret_tensor(buf43, (5, 768), (768, 1), 0), reinterpret_tensor(arg31_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf44)
            del arg31_1
            del arg32_1
            buf45 = reinterpret_tensor(buf28, (12, 5, 5), (25, 5, 1), 0); del buf28  # reuse
            # Topologically Sorted Source Nodes: [linear_8, split_2, view_8, q_5, matmul_4, view_9, k_5, transpose_2], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf44, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf44, (12, 64, 5), (64, 1, 2304), 768), out=buf45)
            buf46 = buf27; del buf27  # reuse
            buf47 = buf26; del buf26  # reuse
            # Topologically Sorted Source Nodes: [causal_2, invert_2, w_5, matmul_4, w_4], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg33_1, buf45, buf46, buf47, 60, stream=stream0)
            buf48 = reinterpret_tensor(buf45, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf45  # reuse
            # Topologically Sorted Source Nodes: [causal_2, invert_2, w_5, matmul_4, w_4, softmax_2], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf48, arg33_1, buf46, buf47, 300, stream=stream0)
            del arg33_1
            buf49 = reinterpret_tensor(buf43, (12, 5, 64), (320, 64, 1), 0); del buf43  # reuse
            # Topologically Sorted Source Nodes: [linear_8, split_2, causal_2, invert_2, w_5, matmul_4, w_4, softmax_2, a_4, view_10, v_5], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf48, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf44, (12, 5, 64), (64, 2304, 1), 1536), out=buf49)
            del buf44
            buf50 = reinterpret_tensor(buf19, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf19  # reuse
            # Topologically Sorted Source Nodes: [a_4, permute_11, contiguous_2], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf49, buf50, 3840, stream=stream0)
            buf51 = reinterpret_tensor(buf49, (5, 768), (768, 1), 0); del buf49  # reuse
            # Topologically Sorted Source Nodes: [a_4, permute_11, contiguous_2, a_5, linear_9], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf50, (5, 768), (768, 1), 0), reinterpret_tensor(arg34_1, (768, 768), (1, 768), 0), out=buf51)
            del arg34_1
            buf52 = buf32; del buf32  # reuse
            buf56 = reinterpret_tensor(buf50, (1, 5, 768), (3840, 768, 1), 0); del buf50  # reuse
            # Topologically Sorted Source Nodes: [linear_7, x_4, linear_9, x_5, layer_norm_5], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf52, arg28_1, buf39, arg35_1, buf51, arg36_1, arg37_1, buf56, 5, 768, stream=stream0)
            del arg28_1
            del arg35_1
            del arg36_1
            del arg37_1
            buf57 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_5, linear_10], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf56, (5, 768), (768, 1), 0), reinterpret_tensor(arg38_1, (768, 3072), (1, 768), 0), out=buf57)
            del arg38_1
            buf58 = reinterpret_tensor(buf57, (1, 5, 3072), (15360, 3072, 1), 0); del buf57  # reuse
            # Topologically Sorted Source Nodes: [linear_10, mul_8, pow_3, mul_9, add_10, mul_10, tanh_2, add_11, mul_11], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf58, arg39_1, 15360, stream=stream0)
            del arg39_1
            buf59 = reinterpret_tensor(buf56, (5, 768), (768, 1), 0); del buf56  # reuse
            # Topologically Sorted Source Nodes: [linear_10, mul_8, pow_3, mul_9, add_10, mul_10, tanh_2, add_11, mul_11, linear_11], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf58, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg40_1, (3072, 768), (1, 3072), 0), out=buf59)
            del arg40_1
            del buf58
            buf63 = reinterpret_tensor(buf51, (1, 5, 768), (3840, 768, 1), 0); del buf51  # reuse
            # Topologically Sorted Source Nodes: [linear_11, x_6, layer_norm_6], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf52, arg41_1, buf59, arg42_1, arg43_1, buf63, 5, 768, stream=stream0)
            del arg42_1
            del arg43_1
            buf64 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_11, x_6, layer_norm_6, linear_12], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg45_1, reinterpret_tensor(buf63, (5, 768), (768, 1), 0), reinterpret_tensor(arg44_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf64)
            del arg44_1
            del arg45_1
            buf65 = reinterpret_tensor(buf48, (12, 5, 5), (25, 5, 1), 0); del buf48  # reuse
            # Topologically Sorted Source Nodes: [linear_12, split_3, view_12, q_7, matmul_6, view_13, k_7, transpose_3], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf64, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf64, (12, 64, 5), (64, 1, 2304), 768), out=buf65)
            buf66 = buf47; del buf47  # reuse
            buf67 = buf46; del buf46  # reuse
            # Topologically Sorted Source Nodes: [causal_3, invert_3, w_7, matmul_6, w_6], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg46_1, buf65, buf66, buf67, 60, stream=stream0)
            buf68 = reinterpret_tensor(buf65, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf65  # reuse
            # Topologically Sorted Source Nodes: [causal_3, invert_3, w_7, matmul_6, w_6, softmax_3], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf68, arg46_1, buf66, buf67, 300, stream=stream0)
            del arg46_1
            buf69 = reinterpret_tensor(buf63, (12, 5, 64), (320, 64, 1), 0); del buf63  # reuse
            # Topologically Sorted Source Nodes: [linear_12, split_3, causal_3, invert_3, w_7, matmul_6, w_6, softmax_3, a_6, view_14, v_7], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf68, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf64, (12, 5, 64), (64, 2304, 1), 1536), out=buf69)
            del buf64
            buf70 = reinterpret_tensor(buf39, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf39  # reuse
            # Topologically Sorted Source Nodes: [a_6, permute_15, contiguous_3], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf69, buf70, 3840, stream=stream0)
            buf71 = reinterpret_tensor(buf69, (5, 768), (768, 1), 0); del buf69  # reuse
            # Topologically Sorted Source Nodes: [a_6, permute_15, contiguous_3, a_7, linear_13], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf70, (5, 768), (768, 1), 0), reinterpret_tensor(arg47_1, (768, 768), (1, 768), 0), out=buf71)
            del arg47_1
            buf72 = buf52; del buf52  # reuse
            buf76 = reinterpret_tensor(buf70, (1, 5, 768), (3840, 768, 1), 0); del buf70  # reuse
            # Topologically Sorted Source Nodes: [linear_11, x_6, linear_13, x_7, layer_norm_7], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf72, arg41_1, buf59, arg48_1, buf71, arg49_1, arg50_1, buf76, 5, 768, stream=stream0)
            del arg41_1
            del arg48_1
            del arg49_1
            del arg50_1
            buf77 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_7, linear_14], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf76, (5, 768), (768, 1), 0), reinterpret_tensor(arg51_1, (768, 3072), (1, 768), 0), out=buf77)
            del arg51_1
            buf78 = reinterpret_tensor(buf77, (1, 5, 3072), (15360, 3072, 1), 0); del buf77  # reuse
            # Topologically Sorted Source Nodes: [linear_14, mul_12, pow_4, mul_13, add_14, mul_14, tanh_3, add_15, mul_15], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf78, arg52_1, 15360, stream=stream0)
            del arg52_1
            buf79 = reinterpret_tensor(buf76, (5, 768), (768, 1), 0); del buf76  # reuse
            # Topologically Sorted Source Nodes: [linear_14, mul_12, pow_4, mul_13, add_14, mul_14, tanh_3, add_15, mul_15, linear_15], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf78, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg53_1, (3072, 768), (1, 3072), 0), out=buf79)
            del arg53_1
            del buf78
            buf83 = reinterpret_tensor(buf71, (1, 5, 768), (3840, 768, 1), 0); del buf71  # reuse
            # Topologically Sorted Source Nodes: [linear_15, x_8, layer_norm_8], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf72, arg54_1, buf79, arg55_1, arg56_1, buf83, 5, 768, stream=stream0)
            del arg55_1
            del arg56_1
            buf84 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_15, x_8, layer_norm_8, linear_16], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg58_1, reinterpret_tensor(buf83, (5, 768), (768, 1), 0), reinterpret_tensor(arg57_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf84)
            del arg57_1
            del arg58_1
            buf85 = reinterpret_tensor(buf68, (12, 5, 5), (25, 5, 1), 0); del buf68  # reuse
            # Topologically Sorted Source Nodes: [linear_16, split_4, view_16, q_9, matmul_8, view_17, k_9, transpose_4], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf84, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf84, (12, 64, 5), (64, 1, 2304), 768), out=buf85)
            buf86 = buf67; del buf67  # reuse
            buf87 = buf66; del buf66  # reuse
            # Topologically Sorted Source Nodes: [causal_4, invert_4, w_9, matmul_8, w_8], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg59_1, buf85, buf86, buf87, 60, stream=stream0)
            buf88 = reinterpret_tensor(buf85, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf85  # reuse
            # Topologically Sorted Source Nodes: [causal_4, invert_4, w_9, matmul_8, w_8, softmax_4], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf88, arg59_1, buf86, buf87, 300, stream=stream0)
            del arg59_1
            buf89 = reinterpret_tensor(buf83, (12, 5, 64), (320, 64, 1), 0); del buf83  # reuse
            # Topologically Sorted Source Nodes: [linear_16, split_4, causal_4, invert_4, w_9, matmul_8, w_8, softmax_4, a_8, view_18, v_9], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf88, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf84, (12, 5, 64), (64, 2304, 1), 1536), out=buf89)
            del buf84
            buf90 = reinterpret_tensor(buf59, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf59  # reuse
            # Topologically Sorted Source Nodes: [a_8, permute_19, contiguous_4], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf89, buf90, 3840, stream=stream0)
            buf91 = reinterpret_tensor(buf89, (5, 768), (768, 1), 0); del buf89  # reuse
            # Topologically Sorted Source Nodes: [a_8, permute_19, contiguous_4, a_9, linear_17], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf90, (5, 768), (768, 1), 0), reinterpret_tensor(arg60_1, (768, 768), (1, 768), 0), out=buf91)
            del arg60_1
            buf92 = buf72; del buf72  # reuse
            buf96 = reinterpret_tensor(buf90, (1, 5, 768), (3840, 768, 1), 0); del buf90  # reuse
            # Topologically Sorted Source Nodes: [linear_15, x_8, linear_17, x_9, layer_norm_9], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf92, arg54_1, buf79, arg61_1, buf91, arg62_1, arg63_1, buf96, 5, 768, stream=stream0)
            del arg54_1
            del arg61_1
            del arg62_1
            del arg63_1
            buf97 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_9, linear_18], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf96, (5, 768), (768, 1), 0), reinterpret_tensor(arg64_1, (768, 3072), (1, 768), 0), out=buf97)
            del arg64_1
            buf98 = reinterpret_tensor(buf97, (1, 5, 3072), (15360, 3072, 1), 0); del buf97  # reuse
            # Topologically Sorted Source Nodes: [linear_18, mul_16, pow_5, mul_17, add_18, mul_18, tanh_4, add_19, mul_19], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf98, arg65_1, 15360, stream=stream0)
            del arg65_1
            buf99 = reinterpret_tensor(buf96, (5, 768), (768, 1), 0); del buf96  # reuse
            # Topologically Sorted Source Nodes: [linear_18, mul_16, pow_5, mul_17, add_18, mul_18, tanh_4, add_19, mul_19, linear_19], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf98, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg66_1, (3072, 768), (1, 3072), 0), out=buf99)
            del arg66_1
            del buf98
            buf103 = reinterpret_tensor(buf91, (1, 5, 768), (3840, 768, 1), 0); del buf91  # reuse
            # Topologically Sorted Source Nodes: [linear_19, x_10, layer_norm_10], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf92, arg67_1, buf99, arg68_1, arg69_1, buf103, 5, 768, stream=stream0)
            del arg68_1
            del arg69_1
            buf104 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_19, x_10, layer_norm_10, linear_20], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg71_1, reinterpret_tensor(buf103, (5, 768), (768, 1), 0), reinterpret_tensor(arg70_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf104)
            del arg70_1
            del arg71_1
            buf105 = reinterpret_tensor(buf88, (12, 5, 5), (25, 5, 1), 0); del buf88  # reuse
            # Topologically Sorted Source Nodes: [linear_20, split_5, view_20, q_11, matmul_10, view_21, k_11, transpose_5], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf104, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf104, (12, 64, 5), (64, 1, 2304), 768), out=buf105)
            buf106 = buf87; del buf87  # reuse
            buf107 = buf86; del buf86  # reuse
            # Topologically Sorted Source Nodes: [causal_5, invert_5, w_11, matmul_10, w_10], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg72_1, buf105, buf106, buf107, 60, stream=stream0)
            buf108 = reinterpret_tensor(buf105, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf105  # reuse
            # Topologically Sorted Source Nodes: [causal_5, invert_5, w_11, matmul_10, w_10, softmax_5], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf108, arg72_1, buf106, buf107, 300, stream=stream0)
            del arg72_1
            buf109 = reinterpret_tensor(buf103, (12, 5, 64), (320, 64, 1), 0); del buf103  # reuse
            # Topologically Sorted Source Nodes: [linear_20, split_5, causal_5, invert_5, w_11, matmul_10, w_10, softmax_5, a_10, view_22, v_11], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf108, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf104, (12, 5, 64), (64, 2304, 1), 1536), out=buf109)
            del buf104
            buf110 = reinterpret_tensor(buf79, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf79  # reuse
            # Topologically Sorted Source Nodes: [a_10, permute_23, contiguous_5], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf109, buf110, 3840, stream=stream0)
            buf111 = reinterpret_tensor(buf109, (5, 768), (768, 1), 0); del buf109  # reuse
            # Topologically Sorted Source Nodes: [a_10, permute_23, contiguous_5, a_11, linear_21], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf110, (5, 768), (768, 1), 0), reinterpret_tensor(arg73_1, (768, 768), (1, 768), 0), out=buf111)
            del arg73_1
            buf112 = buf92; del buf92  # reuse
            buf116 = reinterpret_tensor(buf110, (1, 5, 768), (3840, 768, 1), 0); del buf110  # reuse
            # Topologically Sorted Source Nodes: [linear_19, x_10, linear_21, x_11, layer_norm_11], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf112, arg67_1, buf99, arg74_1, buf111, arg75_1, arg76_1, buf116, 5, 768, stream=stream0)
            del arg67_1
            del arg74_1
            del arg75_1
            del arg76_1
            buf117 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_11, linear_22], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf116, (5, 768), (768, 1), 0), reinterpret_tensor(arg77_1, (768, 3072), (1, 768), 0), out=buf117)
            del arg77_1
            buf118 = reinterpret_tensor(buf117, (1, 5, 3072), (15360, 3072, 1), 0); del buf117  # reuse
            # Topologically Sorted Source Nodes: [linear_22, mul_20, pow_6, mul_21, add_22, mul_22, tanh_5, add_23, mul_23], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf118, arg78_1, 15360, stream=stream0)
            del arg78_1
            buf119 = reinterpret_tensor(buf116, (5, 768), (768, 1), 0); del buf116  # reuse
            # Topologically Sorted Source Nodes: [linear_22, mul_20, pow_6, mul_21, add_22, mul_22, tanh_5, add_23, mul_23, linear_23], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf118, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg79_1, (3072, 768), (1, 3072), 0), out=buf119)
            del arg79_1
            del buf118
            buf123 = reinterpret_tensor(buf99, (1, 5, 768), (3840, 768, 1), 0); del buf99  # reuse
            # Topologically Sorted Source Nodes: [linear_23, x_12, layer_norm_12], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf112, arg80_1, buf119, arg81_1, arg82_1, buf123, 5, 768, stream=stream0)
            del arg81_1
            del arg82_1
            buf124 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_23, x_12, layer_norm_12, linear_24], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg84_1, reinterpret_tensor(buf123, (5, 768), (768, 1), 0), reinterpret_tensor(arg83_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf124)
            del arg83_1
            del arg84_1
            buf125 = reinterpret_tensor(buf108, (12, 5, 5), (25, 5, 1), 0); del buf108  # reuse
            # Topologically Sorted Source Nodes: [linear_24, split_6, view_24, q_13, matmul_12, view_25, k_13, transpose_6], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf124, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf124, (12, 64, 5), (64, 1, 2304), 768), out=buf125)
            buf126 = buf107; del buf107  # reuse
            buf127 = buf106; del buf106  # reuse
            # Topologically Sorted Source Nodes: [causal_6, invert_6, w_13, matmul_12, w_12], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg85_1, buf125, buf126, buf127, 60, stream=stream0)
            buf128 = reinterpret_tensor(buf125, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf125  # reuse
            # Topologically Sorted Source Nodes: [causal_6, invert_6, w_13, matmul_12, w_12, softmax_6], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf128, arg85_1, buf126, buf127, 300, stream=stream0)
            del arg85_1
            buf129 = reinterpret_tensor(buf123, (12, 5, 64), (320, 64, 1), 0); del buf123  # reuse
            # Topologically Sorted Source Nodes: [linear_24, split_6, causal_6, invert_6, w_13, matmul_12, w_12, softmax_6, a_12, view_26, v_13], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf128, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf124, (12, 5, 64), (64, 2304, 1), 1536), out=buf129)
            del buf124
            buf130 = reinterpret_tensor(buf111, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf111  # reuse
            # Topologically Sorted Source Nodes: [a_12, permute_27, contiguous_6], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf129, buf130, 3840, stream=stream0)
            buf131 = reinterpret_tensor(buf129, (5, 768), (768, 1), 0); del buf129  # reuse
            # Topologically Sorted Source Nodes: [a_12, permute_27, contiguous_6, a_13, linear_25], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf130, (5, 768), (768, 1), 0), reinterpret_tensor(arg86_1, (768, 768), (1, 768), 0), out=buf131)
            del arg86_1
            buf132 = buf112; del buf112  # reuse
            buf136 = reinterpret_tensor(buf130, (1, 5, 768), (3840, 768, 1), 0); del buf130  # reuse
            # Topologically Sorted Source Nodes: [linear_23, x_12, linear_25, x_13, layer_norm_13], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf132, arg80_1, buf119, arg87_1, buf131, arg88_1, arg89_1, buf136, 5, 768, stream=stream0)
            del arg80_1
            del arg87_1
            del arg88_1
            del arg89_1
            buf137 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_13, linear_26], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf136, (5, 768), (768, 1), 0), reinterpret_tensor(arg90_1, (768, 3072), (1, 768), 0), out=buf137)
            del arg90_1
            buf138 = reinterpret_tensor(buf137, (1, 5, 3072), (15360, 3072, 1), 0); del buf137  # reuse
            # Topologically Sorted Source Nodes: [linear_26, mul_24, pow_7, mul_25, add_26, mul_26, tanh_6, add_27, mul_27], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf138, arg91_1, 15360, stream=stream0)
            del arg91_1
            buf139 = reinterpret_tensor(buf136, (5, 768), (768, 1), 0); del buf136  # reuse
            # Topologically Sorted Source Nodes: [linear_26, mul_24, pow_7, mul_25, add_26, mul_26, tanh_6, add_27, mul_27, linear_27], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf138, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg92_1, (3072, 768), (1, 3072), 0), out=buf139)
            del arg92_1
            del buf138
            buf143 = reinterpret_tensor(buf131, (1, 5, 768), (3840, 768, 1), 0); del buf131  # reuse
            # Topologically Sorted Source Nodes: [linear_27, x_14, layer_norm_14], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf132, arg93_1, buf139, arg94_1, arg95_1, buf143, 5, 768, stream=stream0)
            del arg94_1
            del arg95_1
            buf144 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_27, x_14, layer_norm_14, linear_28], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg97_1, reinterpret_tensor(buf143, (5, 768), (768, 1), 0), reinterpret_tensor(arg96_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf144)
            del arg96_1
            del arg97_1
            buf145 = reinterpret_tensor(buf128, (12, 5, 5), (25, 5, 1), 0); del buf128  # reuse
            # Topologically Sorted Source Nodes: [linear_28, split_7, view_28, q_15, matmul_14, view_29, k_15, transpose_7], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf144, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf144, (12, 64, 5), (64, 1, 2304), 768), out=buf145)
            buf146 = buf127; del buf127  # reuse
            buf147 = buf126; del buf126  # reuse
            # Topologically Sorted Source Nodes: [causal_7, invert_7, w_15, matmul_14, w_14], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg98_1, buf145, buf146, buf147, 60, stream=stream0)
            buf148 = reinterpret_tensor(buf145, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf145  # reuse
            # Topologically Sorted Source Nodes: [causal_7, invert_7, w_15, matmul_14, w_14, softmax_7], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf148, arg98_1, buf146, buf147, 300, stream=stream0)
            del arg98_1
            buf149 = reinterpret_tensor(buf143, (12, 5, 64), (320, 64, 1), 0); del buf143  # reuse
            # Topologically Sorted Source Nodes: [linear_28, split_7, causal_7, invert_7, w_15, matmul_14, w_14, softmax_7, a_14, view_30, v_15], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf148, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf144, (12, 5, 64), (64, 2304, 1), 1536), out=buf149)
            del buf144
            buf150 = reinterpret_tensor(buf119, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf119  # reuse
            # Topologically Sorted Source Nodes: [a_14, permute_31, contiguous_7], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf149, buf150, 3840, stream=stream0)
            buf151 = reinterpret_tensor(buf149, (5, 768), (768, 1), 0); del buf149  # reuse
            # Topologically Sorted Source Nodes: [a_14, permute_31, contiguous_7, a_15, linear_29], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf150, (5, 768), (768, 1), 0), reinterpret_tensor(arg99_1, (768, 768), (1, 768), 0), out=buf151)
            del arg99_1
            buf152 = buf132; del buf132  # reuse
            buf156 = reinterpret_tensor(buf150, (1, 5, 768), (3840, 768, 1), 0); del buf150  # reuse
            # Topologically Sorted Source Nodes: [linear_27, x_14, linear_29, x_15, layer_norm_15], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf152, arg93_1, buf139, arg100_1, buf151, arg101_1, arg102_1, buf156, 5, 768, stream=stream0)
            del arg100_1
            del arg101_1
            del arg102_1
            del arg93_1
            buf157 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_15, linear_30], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf156, (5, 768), (768, 1), 0), reinterpret_tensor(arg103_1, (768, 3072), (1, 768), 0), out=buf157)
            del arg103_1
            buf158 = reinterpret_tensor(buf157, (1, 5, 3072), (15360, 3072, 1), 0); del buf157  # reuse
            # Topologically Sorted Source Nodes: [linear_30, mul_28, pow_8, mul_29, add_30, mul_30, tanh_7, add_31, mul_31], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf158, arg104_1, 15360, stream=stream0)
            del arg104_1
            buf159 = reinterpret_tensor(buf156, (5, 768), (768, 1), 0); del buf156  # reuse
            # Topologically Sorted Source Nodes: [linear_30, mul_28, pow_8, mul_29, add_30, mul_30, tanh_7, add_31, mul_31, linear_31], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf158, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg105_1, (3072, 768), (1, 3072), 0), out=buf159)
            del arg105_1
            del buf158
            buf163 = reinterpret_tensor(buf151, (1, 5, 768), (3840, 768, 1), 0); del buf151  # reuse
            # Topologically Sorted Source Nodes: [linear_31, x_16, layer_norm_16], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf152, arg106_1, buf159, arg107_1, arg108_1, buf163, 5, 768, stream=stream0)
            del arg107_1
            del arg108_1
            buf164 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_31, x_16, layer_norm_16, linear_32], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg110_1, reinterpret_tensor(buf163, (5, 768), (768, 1), 0), reinterpret_tensor(arg109_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf164)
            del arg109_1
            del arg110_1
            buf165 = reinterpret_tensor(buf148, (12, 5, 5), (25, 5, 1), 0); del buf148  # reuse
            # Topologically Sorted Source Nodes: [linear_32, split_8, view_32, q_17, matmul_16, view_33, k_17, transpose_8], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf164, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf164, (12, 64, 5), (64, 1, 2304), 768), out=buf165)
            buf166 = buf147; del buf147  # reuse
            buf167 = buf146; del buf146  # reuse
            # Topologically Sorted Source Nodes: [causal_8, invert_8, w_17, matmul_16, w_16], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg111_1, buf165, buf166, buf167, 60, stream=stream0)
            buf168 = reinterpret_tensor(buf165, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf165  # reuse
            # Topologically Sorted Source Nodes: [causal_8, invert_8, w_17, matmul_16, w_16, softmax_8], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf168, arg111_1, buf166, buf167, 300, stream=stream0)
            del arg111_1
            buf169 = reinterpret_tensor(buf163, (12, 5, 64), (320, 64, 1), 0); del buf163  # reuse
            # Topologically Sorted Source Nodes: [linear_32, split_8, causal_8, invert_8, w_17, matmul_16, w_16, softmax_8, a_16, view_34, v_17], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf168, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf164, (12, 5, 64), (64, 2304, 1), 1536), out=buf169)
            del buf164
            buf170 = reinterpret_tensor(buf139, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf139  # reuse
            # Topologically Sorted Source Nodes: [a_16, permute_35, contiguous_8], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf169, buf170, 3840, stream=stream0)
            buf171 = reinterpret_tensor(buf169, (5, 768), (768, 1), 0); del buf169  # reuse
            # Topologically Sorted Source Nodes: [a_16, permute_35, contiguous_8, a_17, linear_33], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf170, (5, 768), (768, 1), 0), reinterpret_tensor(arg112_1, (768, 768), (1, 768), 0), out=buf171)
            del arg112_1
            buf172 = buf152; del buf152  # reuse
            buf176 = reinterpret_tensor(buf170, (1, 5, 768), (3840, 768, 1), 0); del buf170  # reuse
            # Topologically Sorted Source Nodes: [linear_31, x_16, linear_33, x_17, layer_norm_17], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf172, arg106_1, buf159, arg113_1, buf171, arg114_1, arg115_1, buf176, 5, 768, stream=stream0)
            del arg106_1
            del arg113_1
            del arg114_1
            del arg115_1
            buf177 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_17, linear_34], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf176, (5, 768), (768, 1), 0), reinterpret_tensor(arg116_1, (768, 3072), (1, 768), 0), out=buf177)
            del arg116_1
            buf178 = reinterpret_tensor(buf177, (1, 5, 3072), (15360, 3072, 1), 0); del buf177  # reuse
            # Topologically Sorted Source Nodes: [linear_34, mul_32, pow_9, mul_33, add_34, mul_34, tanh_8, add_35, mul_35], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf178, arg117_1, 15360, stream=stream0)
            del arg117_1
            buf179 = reinterpret_tensor(buf176, (5, 768), (768, 1), 0); del buf176  # reuse
            # Topologically Sorted Source Nodes: [linear_34, mul_32, pow_9, mul_33, add_34, mul_34, tanh_8, add_35, mul_35, linear_35], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf178, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg118_1, (3072, 768), (1, 3072), 0), out=buf179)
            del arg118_1
            del buf178
            buf183 = reinterpret_tensor(buf171, (1, 5, 768), (3840, 768, 1), 0); del buf171  # reuse
            # Topologically Sorted Source Nodes: [linear_35, x_18, layer_norm_18], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf172, arg119_1, buf179, arg120_1, arg121_1, buf183, 5, 768, stream=stream0)
            del arg120_1
            del arg121_1
            buf184 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_35, x_18, layer_norm_18, linear_36], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg123_1, reinterpret_tensor(buf183, (5, 768), (768, 1), 0), reinterpret_tensor(arg122_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf184)
            del arg122_1
            del arg123_1
            buf185 = reinterpret_tensor(buf168, (12, 5, 5), (25, 5, 1), 0); del buf168  # reuse
            # Topologically Sorted Source Nodes: [linear_36, split_9, view_36, q_19, matmul_18, view_37, k_19, transpose_9], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf184, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf184, (12, 64, 5), (64, 1, 2304), 768), out=buf185)
            buf186 = buf167; del buf167  # reuse
            buf187 = buf166; del buf166  # reuse
            # Topologically Sorted Source Nodes: [causal_9, invert_9, w_19, matmul_18, w_18], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg124_1, buf185, buf186, buf187, 60, stream=stream0)
            buf188 = reinterpret_tensor(buf185, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf185  # reuse
            # Topologically Sorted Source Nodes: [causal_9, invert_9, w_19, matmul_18, w_18, softmax_9], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf188, arg124_1, buf186, buf187, 300, stream=stream0)
            del arg124_1
            buf189 = reinterpret_tensor(buf183, (12, 5, 64), (320, 64, 1), 0); del buf183  # reuse
            # Topologically Sorted Source Nodes: [linear_36, split_9, causal_9, invert_9, w_19, matmul_18, w_18, softmax_9, a_18, view_38, v_19], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf188, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf184, (12, 5, 64), (64, 2304, 1), 1536), out=buf189)
            del buf184
            buf190 = reinterpret_tensor(buf159, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf159  # reuse
            # Topologically Sorted Source Nodes: [a_18, permute_39, contiguous_9], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf189, buf190, 3840, stream=stream0)
            buf191 = reinterpret_tensor(buf189, (5, 768), (768, 1), 0); del buf189  # reuse
            # Topologically Sorted Source Nodes: [a_18, permute_39, contiguous_9, a_19, linear_37], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf190, (5, 768), (768, 1), 0), reinterpret_tensor(arg125_1, (768, 768), (1, 768), 0), out=buf191)
            del arg125_1
            buf192 = buf172; del buf172  # reuse
            buf196 = reinterpret_tensor(buf190, (1, 5, 768), (3840, 768, 1), 0); del buf190  # reuse
            # Topologically Sorted Source Nodes: [linear_35, x_18, linear_37, x_19, layer_norm_19], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf192, arg119_1, buf179, arg126_1, buf191, arg127_1, arg128_1, buf196, 5, 768, stream=stream0)
            del arg119_1
            del arg126_1
            del arg127_1
            del arg128_1
            buf197 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_19, linear_38], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf196, (5, 768), (768, 1), 0), reinterpret_tensor(arg129_1, (768, 3072), (1, 768), 0), out=buf197)
            del arg129_1
            buf198 = reinterpret_tensor(buf197, (1, 5, 3072), (15360, 3072, 1), 0); del buf197  # reuse
            # Topologically Sorted Source Nodes: [linear_38, mul_36, pow_10, mul_37, add_38, mul_38, tanh_9, add_39, mul_39], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf198, arg130_1, 15360, stream=stream0)
            del arg130_1
            buf199 = reinterpret_tensor(buf196, (5, 768), (768, 1), 0); del buf196  # reuse
            # Topologically Sorted Source Nodes: [linear_38, mul_36, pow_10, mul_37, add_38, mul_38, tanh_9, add_39, mul_39, linear_39], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf198, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg131_1, (3072, 768), (1, 3072), 0), out=buf199)
            del arg131_1
            del buf198
            buf203 = reinterpret_tensor(buf191, (1, 5, 768), (3840, 768, 1), 0); del buf191  # reuse
            # Topologically Sorted Source Nodes: [linear_39, x_20, layer_norm_20], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf192, arg132_1, buf199, arg133_1, arg134_1, buf203, 5, 768, stream=stream0)
            del arg133_1
            del arg134_1
            buf204 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_39, x_20, layer_norm_20, linear_40], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg136_1, reinterpret_tensor(buf203, (5, 768), (768, 1), 0), reinterpret_tensor(arg135_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf204)
            del arg135_1
            del arg136_1
            buf205 = reinterpret_tensor(buf188, (12, 5, 5), (25, 5, 1), 0); del buf188  # reuse
            # Topologically Sorted Source Nodes: [linear_40, split_10, view_40, q_21, matmul_20, view_41, k_21, transpose_10], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf204, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf204, (12, 64, 5), (64, 1, 2304), 768), out=buf205)
            buf206 = buf187; del buf187  # reuse
            buf207 = buf186; del buf186  # reuse
            # Topologically Sorted Source Nodes: [causal_10, invert_10, w_21, matmul_20, w_20], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg137_1, buf205, buf206, buf207, 60, stream=stream0)
            buf208 = reinterpret_tensor(buf205, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf205  # reuse
            # Topologically Sorted Source Nodes: [causal_10, invert_10, w_21, matmul_20, w_20, softmax_10], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf208, arg137_1, buf206, buf207, 300, stream=stream0)
            del arg137_1
            buf209 = reinterpret_tensor(buf203, (12, 5, 64), (320, 64, 1), 0); del buf203  # reuse
            # Topologically Sorted Source Nodes: [linear_40, split_10, causal_10, invert_10, w_21, matmul_20, w_20, softmax_10, a_20, view_42, v_21], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf208, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf204, (12, 5, 64), (64, 2304, 1), 1536), out=buf209)
            del buf204
            buf210 = reinterpret_tensor(buf179, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf179  # reuse
            # Topologically Sorted Source Nodes: [a_20, permute_43, contiguous_10], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf209, buf210, 3840, stream=stream0)
            buf211 = reinterpret_tensor(buf209, (5, 768), (768, 1), 0); del buf209  # reuse
            # Topologically Sorted Source Nodes: [a_20, permute_43, contiguous_10, a_21, linear_41], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf210, (5, 768), (768, 1), 0), reinterpret_tensor(arg138_1, (768, 768), (1, 768), 0), out=buf211)
            del arg138_1
            buf212 = buf192; del buf192  # reuse
            buf216 = reinterpret_tensor(buf210, (1, 5, 768), (3840, 768, 1), 0); del buf210  # reuse
            # Topologically Sorted Source Nodes: [linear_39, x_20, linear_41, x_21, layer_norm_21], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf212, arg132_1, buf199, arg139_1, buf211, arg140_1, arg141_1, buf216, 5, 768, stream=stream0)
            del arg132_1
            del arg139_1
            del arg140_1
            del arg141_1
            buf217 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_21, linear_42], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf216, (5, 768), (768, 1), 0), reinterpret_tensor(arg142_1, (768, 3072), (1, 768), 0), out=buf217)
            del arg142_1
            buf218 = reinterpret_tensor(buf217, (1, 5, 3072), (15360, 3072, 1), 0); del buf217  # reuse
            # Topologically Sorted Source Nodes: [linear_42, mul_40, pow_11, mul_41, add_42, mul_42, tanh_10, add_43, mul_43], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf218, arg143_1, 15360, stream=stream0)
            del arg143_1
            buf219 = reinterpret_tensor(buf216, (5, 768), (768, 1), 0); del buf216  # reuse
            # Topologically Sorted Source Nodes: [linear_42, mul_40, pow_11, mul_41, add_42, mul_42, tanh_10, add_43, mul_43, linear_43], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf218, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg144_1, (3072, 768), (1, 3072), 0), out=buf219)
            del arg144_1
            del buf218
            buf223 = reinterpret_tensor(buf211, (1, 5, 768), (3840, 768, 1), 0); del buf211  # reuse
            # Topologically Sorted Source Nodes: [linear_43, x_22, layer_norm_22], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_6.run(buf212, arg145_1, buf219, arg146_1, arg147_1, buf223, 5, 768, stream=stream0)
            del arg146_1
            del arg147_1
            buf224 = empty_strided_cuda((5, 2304), (2304, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_43, x_22, layer_norm_22, linear_44], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.addmm(arg149_1, reinterpret_tensor(buf223, (5, 768), (768, 1), 0), reinterpret_tensor(arg148_1, (768, 2304), (1, 768), 0), alpha=1, beta=1, out=buf224)
            del arg148_1
            del arg149_1
            buf225 = reinterpret_tensor(buf208, (12, 5, 5), (25, 5, 1), 0); del buf208  # reuse
            # Topologically Sorted Source Nodes: [linear_44, split_11, view_44, q_23, matmul_22, view_45, k_23, transpose_11], Original ATen: [aten.view, aten.split, aten.permute, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf224, (12, 5, 64), (64, 2304, 1), 0), reinterpret_tensor(buf224, (12, 64, 5), (64, 1, 2304), 768), out=buf225)
            buf226 = buf207; del buf207  # reuse
            buf227 = buf206; del buf206  # reuse
            # Topologically Sorted Source Nodes: [causal_11, invert_11, w_23, matmul_22, w_22], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_bitwise_not_div_masked_fill_prepare_softmax_online_slice_view_1.run(arg150_1, buf225, buf226, buf227, 60, stream=stream0)
            buf228 = reinterpret_tensor(buf225, (1, 12, 5, 5), (300, 25, 5, 1), 0); del buf225  # reuse
            # Topologically Sorted Source Nodes: [causal_11, invert_11, w_23, matmul_22, w_22, softmax_11], Original ATen: [aten.slice, aten.bitwise_not, aten.masked_fill, aten.view, aten.div, aten.sub, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_bitwise_not_div_exp_masked_fill_slice_sub_view_2.run(buf228, arg150_1, buf226, buf227, 300, stream=stream0)
            del arg150_1
            del buf226
            del buf227
            buf229 = reinterpret_tensor(buf223, (12, 5, 64), (320, 64, 1), 0); del buf223  # reuse
            # Topologically Sorted Source Nodes: [linear_44, split_11, causal_11, invert_11, w_23, matmul_22, w_22, softmax_11, a_22, view_46, v_23], Original ATen: [aten.view, aten.split, aten.slice, aten.bitwise_not, aten.masked_fill, aten.div, aten.sub, aten.exp, aten._softmax, aten.permute, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf228, (12, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf224, (12, 5, 64), (64, 2304, 1), 1536), out=buf229)
            del buf224
            del buf228
            buf230 = reinterpret_tensor(buf199, (1, 5, 12, 64), (3840, 768, 64, 1), 0); del buf199  # reuse
            # Topologically Sorted Source Nodes: [a_22, permute_47, contiguous_11], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_3.run(buf229, buf230, 3840, stream=stream0)
            buf231 = reinterpret_tensor(buf229, (5, 768), (768, 1), 0); del buf229  # reuse
            # Topologically Sorted Source Nodes: [a_22, permute_47, contiguous_11, a_23, linear_45], Original ATen: [aten.view, aten.permute, aten.clone, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf230, (5, 768), (768, 1), 0), reinterpret_tensor(arg151_1, (768, 768), (1, 768), 0), out=buf231)
            del arg151_1
            buf232 = buf212; del buf212  # reuse
            buf236 = reinterpret_tensor(buf230, (1, 5, 768), (3840, 768, 1), 0); del buf230  # reuse
            # Topologically Sorted Source Nodes: [linear_43, x_22, linear_45, x_23, layer_norm_23], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_7.run(buf232, arg145_1, buf219, arg152_1, buf231, arg153_1, arg154_1, buf236, 5, 768, stream=stream0)
            del arg145_1
            del arg152_1
            del arg153_1
            del arg154_1
            del buf219
            del buf231
            buf237 = empty_strided_cuda((5, 3072), (3072, 1), torch.float32)
            # Topologically Sorted Source Nodes: [layer_norm_23, linear_46], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf236, (5, 768), (768, 1), 0), reinterpret_tensor(arg155_1, (768, 3072), (1, 768), 0), out=buf237)
            del arg155_1
            buf238 = reinterpret_tensor(buf237, (1, 5, 3072), (15360, 3072, 1), 0); del buf237  # reuse
            # Topologically Sorted Source Nodes: [linear_46, mul_44, pow_12, mul_45, add_46, mul_46, tanh_11, add_47, mul_47], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_pow_tanh_view_5.run(buf238, arg156_1, 15360, stream=stream0)
            del arg156_1
            buf239 = reinterpret_tensor(buf236, (5, 768), (768, 1), 0); del buf236  # reuse
            # Topologically Sorted Source Nodes: [linear_46, mul_44, pow_12, mul_45, add_46, mul_46, tanh_11, add_47, mul_47, linear_47], Original ATen: [aten.addmm, aten.view, aten.mul, aten.pow, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf238, (5, 3072), (3072, 1), 0), reinterpret_tensor(arg157_1, (3072, 768), (1, 3072), 0), out=buf239)
            del arg157_1
            del buf238
            buf243 = buf232; del buf232  # reuse
            # Topologically Sorted Source Nodes: [linear_47, x_24, layer_norm_24], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_8.run(buf243, arg158_1, buf239, arg159_1, arg160_1, 5, 768, stream=stream0)
            del arg158_1
            del arg159_1
            del arg160_1
            del buf239
            buf244 = empty_strided_cuda((5, 50257), (50257, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_47, x_24, layer_norm_24, linear_48], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf243, (5, 768), (768, 1), 0), reinterpret_tensor(arg1_1, (768, 50257), (1, 768), 0), out=buf244)
            del arg1_1
            del buf243
        return (reinterpret_tensor(buf244, (1, 5, 50257), (251285, 50257, 1), 0), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((1, 5), (5, 1), device='cuda:0', dtype=torch.int64)
    arg1_1 = rand_strided((50257, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg2_1 = rand_strided((1024, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg3_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg4_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg5_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg6_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg7_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg8_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg9_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg10_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg11_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg12_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg13_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg14_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg15_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg16_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg17_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg18_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg19_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg20_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg21_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg22_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg23_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg24_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg25_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg26_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg27_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg28_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg29_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg30_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg31_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg32_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg33_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg34_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg35_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg36_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg37_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg38_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg39_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg40_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg41_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg42_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg43_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg44_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg45_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg46_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg47_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg48_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg49_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg50_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg51_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg52_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg53_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg54_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg55_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg56_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg57_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg58_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg59_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg60_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg61_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg62_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg63_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg64_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg65_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg66_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg67_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg68_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg69_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg70_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg71_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg72_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg73_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg74_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg75_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg76_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg77_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg78_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg79_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg80_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg81_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg82_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg83_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg84_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg85_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg86_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg87_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg88_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg89_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg90_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg91_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg92_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg93_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg94_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg95_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg96_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg97_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg98_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg99_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg100_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg101_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg102_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg103_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg104_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg105_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg106_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg107_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg108_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg109_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg110_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg111_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg112_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg113_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg114_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg115_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg116_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg117_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg118_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg119_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg120_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg121_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg122_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg123_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg124_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg125_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg126_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg127_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg128_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg129_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg130_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg131_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg132_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg133_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg134_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg135_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg136_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg137_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg138_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg139_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg140_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg141_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg142_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg143_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg144_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg145_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg146_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg147_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg148_1 = rand_strided((2304, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg149_1 = rand_strided((2304, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg150_1 = rand_strided((1, 1, 1024, 1024), (1048576, 1048576, 1024, 1), device='cuda:0', dtype=torch.bool)
    arg151_1 = rand_strided((768, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg152_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg153_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg154_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg155_1 = rand_strided((3072, 768), (768, 1), device='cuda:0', dtype=torch.float32)
    arg156_1 = rand_strided((3072, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg157_1 = rand_strided((768, 3072), (3072, 1), device='cuda:0', dtype=torch.float32)
    arg158_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg159_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg160_1 = rand_strided((768, ), (1, ), device='cuda:0', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1, arg31_1, arg32_1, arg33_1, arg34_1, arg35_1, arg36_1, arg37_1, arg38_1, arg39_1, arg40_1, arg41_1, arg42_1, arg43_1, arg44_1, arg45_1, arg46_1, arg47_1, arg48_1, arg49_1, arg50_1, arg51_1, arg52_1, arg53_1, arg54_1, arg55_1, arg56_1, arg57_1, arg58_1, arg59_1, arg60_1, arg61_1, arg62_1, arg63_1, arg64_1, arg65_1, arg66_1, arg67_1, arg68_1, arg69_1, arg70_1, arg71_1, arg72_1, arg73_1, arg74_1, arg75_1, arg76_1, arg77_1, arg78_1, arg79_1, arg80_1, arg81_1, arg82_1, arg83_1, arg84_1, arg85_1, arg86_1, arg87_1, arg88_1, arg89_1, arg90_1, arg91_1, arg92_1, arg93_1, arg94_1, arg95_1, arg96_1, arg97_1, arg98_1, arg99_1, arg100_1, arg101_1, arg102_1, arg103_1, arg104_1, arg105_1, arg106_1, arg107_1, arg108_1, arg109_1, arg110_1, arg111_1, arg112_1, arg113_1, arg114_1, arg115_1, arg116_1, arg117_1, arg118_1, arg119_1, arg120_1, arg121_1, arg122_1, arg123_1, arg124_1, arg125_1, arg126_1, arg127_1, arg128_1, arg129_1, arg130_1, arg131_1, arg132_1, arg133_1, arg134_1, arg135_1, arg136_1, arg137_1, arg138_1, arg139_1, arg140_1, arg141_1, arg142_1, arg143_1, arg144_1, arg145_1, arg146_1, arg147_1, arg148_1, arg149_1, arg150_1, arg151_1, arg152_1, arg153_1, arg154_1, arg155_1, arg156_1, arg157_1, arg158_1, arg159_1, arg160_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
