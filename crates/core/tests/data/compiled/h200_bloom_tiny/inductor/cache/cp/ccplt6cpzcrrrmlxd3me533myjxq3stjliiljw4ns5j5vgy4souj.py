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


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/tf/ctfg427ddeqldlu7rgeejmlsn476filjdnbhlhjtqpnwivtrfosn.py
# Topologically Sorted Source Nodes: [embedding, hidden, ln], Original ATen: [aten.embedding, aten.native_layer_norm]
# Source node to ATen node mapping:
#   embedding => embedding
#   hidden => add, add_1, mul, mul_1, rsqrt, sub, var_mean
#   ln => add_2, add_3, mul_3, mul_4, rsqrt_1, sub_2, var_mean_1
# Graph fragment:
#   %arg1_1 : Tensor "i64[1, 5][5, 1]cuda:0" = PlaceHolder[target=arg1_1]
#   %arg0_1 : Tensor "f32[1000, 64][64, 1]cuda:0" = PlaceHolder[target=arg0_1]
#   %getitem_1 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_1]
#   %buf1 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf1]
#   %arg2_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg2_1]
#   %arg3_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg3_1]
#   %add_1 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=add_1]
#   %getitem_3 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_3]
#   %buf5 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf5]
#   %arg5_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg5_1]
#   %arg6_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg6_1]
#   %embedding : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.embedding.default](args = (%arg0_1, %arg1_1), kwargs = {})
#   %var_mean : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%embedding, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%embedding, %getitem_1), kwargs = {})
#   %add : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem, 1e-05), kwargs = {})
#   %rsqrt : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add,), kwargs = {})
#   %mul : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub, %rsqrt), kwargs = {})
#   %mul_1 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul, %arg2_1), kwargs = {})
#   %add_1 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_1, %arg3_1), kwargs = {})
#   %var_mean_1 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_1, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_2 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_1, %getitem_3), kwargs = {})
#   %add_2 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_2, 1e-05), kwargs = {})
#   %rsqrt_1 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_2,), kwargs = {})
#   %mul_3 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_2, %rsqrt_1), kwargs = {})
#   %mul_4 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_3, %arg5_1), kwargs = {})
#   %add_3 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_4, %arg6_1), kwargs = {})
#   return %getitem_1,%buf1,%add_1,%getitem_3,%buf5,%add_3
triton_per_fused_embedding_native_layer_norm_0 = async_compile.triton('triton_per_fused_embedding_native_layer_norm_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 64},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*i64', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'out_ptr2': '*fp32', 'out_ptr5': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_embedding_native_layer_norm_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 5, 'num_store': 2, 'num_reduction': 8, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 25, 'r0_': 6144}}
)
@triton.jit
def triton_per_fused_embedding_native_layer_norm_0(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr2, out_ptr5, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 64
    R0_BLOCK: tl.constexpr = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    x0 = xindex
    r0_1 = r0_index
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp30 = tl.load(in_ptr2 + (r0_1), None, eviction_policy='evict_last')
    tmp32 = tl.load(in_ptr3 + (r0_1), None, eviction_policy='evict_last')
    tmp53 = tl.load(in_ptr4 + (r0_1), None, eviction_policy='evict_last')
    tmp55 = tl.load(in_ptr5 + (r0_1), None, eviction_policy='evict_last')
    tmp1 = tl.full([1, 1], 1000, tl.int32)
    tmp2 = tmp0 + tmp1
    tmp3 = tmp0 < 0
    tmp4 = tl.where(tmp3, tmp2, tmp0)
    tl.device_assert(((0 <= tmp4) & (tmp4 < 1000)) | ~(xmask), "index out of bounds: 0 <= tmp4 < 1000")
    tmp6 = tl.load(in_ptr1 + (r0_1 + 64*tmp4), xmask, other=0.0)
    tmp7 = tl.broadcast_to(tmp6, [XBLOCK, R0_BLOCK])
    tmp9 = tl.where(xmask, tmp7, 0)
    tmp10 = tl.broadcast_to(tmp7, [XBLOCK, R0_BLOCK])
    tmp12 = tl.where(xmask, tmp10, 0)
    tmp13 = tl.sum(tmp12, 1)[:, None].to(tl.float32)
    tmp14 = tl.full([1, 1], 64, tl.int32)
    tmp15 = tmp14.to(tl.float32)
    tmp16 = (tmp13 / tmp15)
    tmp17 = tmp7 - tmp16
    tmp18 = tmp17 * tmp17
    tmp19 = tl.broadcast_to(tmp18, [XBLOCK, R0_BLOCK])
    tmp21 = tl.where(xmask, tmp19, 0)
    tmp22 = tl.sum(tmp21, 1)[:, None].to(tl.float32)
    tmp23 = tmp6 - tmp16
    tmp24 = tl.full([1, 1], 64.0, tl.float32)
    tmp25 = (tmp22 / tmp24)
    tmp26 = tl.full([1, 1], 1e-05, tl.float32)
    tmp27 = tmp25 + tmp26
    tmp28 = libdevice.rsqrt(tmp27)
    tmp29 = tmp23 * tmp28
    tmp31 = tmp29 * tmp30
    tmp33 = tmp31 + tmp32
    tmp34 = tl.broadcast_to(tmp33, [XBLOCK, R0_BLOCK])
    tmp36 = tl.where(xmask, tmp34, 0)
    tmp37 = tl.broadcast_to(tmp34, [XBLOCK, R0_BLOCK])
    tmp39 = tl.where(xmask, tmp37, 0)
    tmp40 = tl.sum(tmp39, 1)[:, None].to(tl.float32)
    tmp41 = (tmp40 / tmp15)
    tmp42 = tmp34 - tmp41
    tmp43 = tmp42 * tmp42
    tmp44 = tl.broadcast_to(tmp43, [XBLOCK, R0_BLOCK])
    tmp46 = tl.where(xmask, tmp44, 0)
    tmp47 = tl.sum(tmp46, 1)[:, None].to(tl.float32)
    tmp48 = tmp33 - tmp41
    tmp49 = (tmp47 / tmp24)
    tmp50 = tmp49 + tmp26
    tmp51 = libdevice.rsqrt(tmp50)
    tmp52 = tmp48 * tmp51
    tmp54 = tmp52 * tmp53
    tmp56 = tmp54 + tmp55
    tl.store(out_ptr2 + (r0_1 + 64*x0), tmp33, xmask)
    tl.store(out_ptr5 + (r0_1 + 64*x0), tmp56, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/ww/cwwmqkdcol6oephc6a76runi75gnl5bb3oib7af3zzhyjk4xrw2r.py
# Topologically Sorted Source Nodes: [cumsum, pos, view, unsqueeze, alibi], Original ATen: [aten.cumsum, aten.sub, aten.view, aten.unsqueeze, aten.mul]
# Source node to ATen node mapping:
#   alibi => mul_2
#   cumsum => iota_default, mul_tensor, view_default
#   pos => sub_1
#   unsqueeze => unsqueeze
#   view => view
# Graph fragment:
#   %arg4_1 : Tensor "f32[4][1]cuda:0" = PlaceHolder[target=arg4_1]
#   %iota_default : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.iota.default](args = (5,), kwargs = {start: 1, step: 1, dtype: torch.int64, device: cuda:0, requires_grad: False})
#   %mul_tensor : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%iota_default, 1), kwargs = {})
#   %view_default : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%mul_tensor, [1, 5]), kwargs = {})
#   %sub_1 : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.sub.Tensor](args = (%expand_default, 1), kwargs = {})
#   %view : Tensor "f32[1, 4, 1][4, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%arg4_1, [1, -1, 1]), kwargs = {})
#   %unsqueeze : Tensor "i64[1, 1, 5][5, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%sub_1, 1), kwargs = {})
#   %mul_2 : Tensor "f32[1, 4, 5][20, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view, %unsqueeze), kwargs = {})
#   return %mul_2
triton_poi_fused_cumsum_mul_sub_unsqueeze_view_1 = async_compile.triton('triton_poi_fused_cumsum_mul_sub_unsqueeze_view_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 32}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_cumsum_mul_sub_unsqueeze_view_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 160}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_cumsum_mul_sub_unsqueeze_view_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 20
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x1 = xindex // 5
    x0 = (xindex % 5)
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy='evict_last')
    tmp1 = x0
    tmp2 = tmp1.to(tl.float32)
    tmp3 = tmp0 * tmp2
    tl.store(out_ptr0 + (x2), tmp3, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/z7/cz7qb3fzm3qygoiv4ejebwys24cb4dh6fclpagot3bhs3sjqipez.py
# Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_2, scores_1], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, prims.prepare_softmax_online]
# Source node to ATen node mapping:
#   causal_mask => unsqueeze_4
#   cumsum => iota_default, mul_tensor, view_default
#   gt => gt
#   pos => sub_1
#   scores_1 => view_8
#   scores_2 => full_default_1, where
#   unsqueeze_2 => unsqueeze_2
#   unsqueeze_3 => unsqueeze_3
# Graph fragment:
#   %baddbmm : Tensor "f32[4, 5, 5][25, 5, 1]cuda:0" = PlaceHolder[target=baddbmm]
#   %getitem_14 : Tensor "f32[1, 4, 5, 1][20, 5, 1, 20]cuda:0" = PlaceHolder[target=getitem_14]
#   %iota_default : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.iota.default](args = (5,), kwargs = {start: 1, step: 1, dtype: torch.int64, device: cuda:0, requires_grad: False})
#   %mul_tensor : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%iota_default, 1), kwargs = {})
#   %view_default : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%mul_tensor, [1, 5]), kwargs = {})
#   %sub_1 : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.sub.Tensor](args = (%expand_default, 1), kwargs = {})
#   %unsqueeze_2 : Tensor "i64[1, 1, 5][5, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%sub_1, 1), kwargs = {})
#   %unsqueeze_3 : Tensor "i64[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%sub_1, 2), kwargs = {})
#   %gt : Tensor "b8[1, 5, 5][25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.gt.Tensor](args = (%unsqueeze_2, %unsqueeze_3), kwargs = {})
#   %unsqueeze_4 : Tensor "b8[1, 1, 5, 5][25, 25, 5, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%gt, 1), kwargs = {})
#   %full_default_1 : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], -3.4028234663852886e+38), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %view_8 : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%baddbmm, [1, 4, 5, 5]), kwargs = {})
#   %where : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.where.self](args = (%unsqueeze_4, %full_default_1, %view_8), kwargs = {})
#   %prepare_softmax_online_default_1 : [num_users=2] = call_function[target=torch.ops.prims.prepare_softmax_online.default](args = (%where, -1), kwargs = {})
#   return %getitem_14,%getitem_15
triton_poi_fused_cumsum_gt_masked_fill_prepare_softmax_online_sub_unsqueeze_view_2 = async_compile.triton('triton_poi_fused_cumsum_gt_masked_fill_prepare_softmax_online_sub_unsqueeze_view_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 32}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'out_ptr1': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_cumsum_gt_masked_fill_prepare_softmax_online_sub_unsqueeze_view_2', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 5, 'num_store': 2, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 320}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_cumsum_gt_masked_fill_prepare_softmax_online_sub_unsqueeze_view_2(in_ptr0, out_ptr0, out_ptr1, xnumel, XBLOCK : tl.constexpr):
    xnumel = 20
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 5)
    x2 = xindex
    tmp3 = tl.load(in_ptr0 + (5*x2), xmask, eviction_policy='evict_last')
    tmp8 = tl.load(in_ptr0 + (1 + 5*x2), xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr0 + (2 + 5*x2), xmask, eviction_policy='evict_last')
    tmp18 = tl.load(in_ptr0 + (3 + 5*x2), xmask, eviction_policy='evict_last')
    tmp23 = tl.load(in_ptr0 + (4 + 5*x2), xmask, eviction_policy='evict_last')
    tmp0 = tl.full([1], 0, tl.int64)
    tmp1 = x0
    tmp2 = tmp0 > tmp1
    tmp4 = tl.full([1], -3.4028234663852886e+38, tl.float32)
    tmp5 = tl.where(tmp2, tmp4, tmp3)
    tmp6 = tl.full([1], 1, tl.int64)
    tmp7 = tmp6 > tmp1
    tmp9 = tl.where(tmp7, tmp4, tmp8)
    tmp10 = triton_helpers.maximum(tmp5, tmp9)
    tmp11 = tl.full([1], 2, tl.int64)
    tmp12 = tmp11 > tmp1
    tmp14 = tl.where(tmp12, tmp4, tmp13)
    tmp15 = triton_helpers.maximum(tmp10, tmp14)
    tmp16 = tl.full([1], 3, tl.int64)
    tmp17 = tmp16 > tmp1
    tmp19 = tl.where(tmp17, tmp4, tmp18)
    tmp20 = triton_helpers.maximum(tmp15, tmp19)
    tmp21 = tl.full([1], 4, tl.int64)
    tmp22 = tmp21 > tmp1
    tmp24 = tl.where(tmp22, tmp4, tmp23)
    tmp25 = triton_helpers.maximum(tmp20, tmp24)
    tmp26 = tmp5 - tmp25
    tmp27 = libdevice.exp(tmp26)
    tmp28 = tmp9 - tmp25
    tmp29 = libdevice.exp(tmp28)
    tmp30 = tmp27 + tmp29
    tmp31 = tmp14 - tmp25
    tmp32 = libdevice.exp(tmp31)
    tmp33 = tmp30 + tmp32
    tmp34 = tmp19 - tmp25
    tmp35 = libdevice.exp(tmp34)
    tmp36 = tmp33 + tmp35
    tmp37 = tmp24 - tmp25
    tmp38 = libdevice.exp(tmp37)
    tmp39 = tmp36 + tmp38
    tl.store(out_ptr0 + (x2), tmp25, xmask)
    tl.store(out_ptr1 + (x2), tmp39, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/46/c467l6gayl5lhepc3gyk3uado3u2447jncncuueccbv6rqnbjyn6.py
# Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_2, scores_1, softmax], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, aten.exp, aten._softmax]
# Source node to ATen node mapping:
#   causal_mask => unsqueeze_4
#   cumsum => iota_default, mul_tensor, view_default
#   gt => gt
#   pos => sub_1
#   scores_1 => view_8
#   scores_2 => full_default_1, where
#   softmax => div
#   unsqueeze_2 => unsqueeze_2
#   unsqueeze_3 => unsqueeze_3
# Graph fragment:
#   %baddbmm : Tensor "f32[4, 5, 5][25, 5, 1]cuda:0" = PlaceHolder[target=baddbmm]
#   %getitem_14 : Tensor "f32[1, 4, 5, 1][20, 5, 1, 20]cuda:0" = PlaceHolder[target=getitem_14]
#   %getitem_15 : Tensor "f32[1, 4, 5, 1][20, 5, 1, 20]cuda:0" = PlaceHolder[target=getitem_15]
#   %iota_default : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.iota.default](args = (5,), kwargs = {start: 1, step: 1, dtype: torch.int64, device: cuda:0, requires_grad: False})
#   %mul_tensor : Tensor "i64[5][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%iota_default, 1), kwargs = {})
#   %view_default : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%mul_tensor, [1, 5]), kwargs = {})
#   %sub_1 : Tensor "i64[1, 5][5, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.sub.Tensor](args = (%expand_default, 1), kwargs = {})
#   %unsqueeze_2 : Tensor "i64[1, 1, 5][5, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%sub_1, 1), kwargs = {})
#   %unsqueeze_3 : Tensor "i64[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%sub_1, 2), kwargs = {})
#   %gt : Tensor "b8[1, 5, 5][25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.gt.Tensor](args = (%unsqueeze_2, %unsqueeze_3), kwargs = {})
#   %unsqueeze_4 : Tensor "b8[1, 1, 5, 5][25, 25, 5, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%gt, 1), kwargs = {})
#   %full_default_1 : Tensor "f32[][]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([], -3.4028234663852886e+38), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %view_8 : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%baddbmm, [1, 4, 5, 5]), kwargs = {})
#   %where : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.where.self](args = (%unsqueeze_4, %full_default_1, %view_8), kwargs = {})
#   %sub_tensor_1 : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%where, %getitem_14), kwargs = {})
#   %exp_default_1 : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%sub_tensor_1,), kwargs = {})
#   %div : Tensor "f32[1, 4, 5, 5][100, 25, 5, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%exp_default_1, %getitem_15), kwargs = {})
#   return %div
triton_poi_fused__softmax_cumsum_exp_gt_masked_fill_sub_unsqueeze_view_3 = async_compile.triton('triton_poi_fused__softmax_cumsum_exp_gt_masked_fill_sub_unsqueeze_view_3', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 128}, 
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__softmax_cumsum_exp_gt_masked_fill_sub_unsqueeze_view_3', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 3, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1200}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__softmax_cumsum_exp_gt_masked_fill_sub_unsqueeze_view_3(in_out_ptr0, in_ptr0, in_ptr1, xnumel, XBLOCK : tl.constexpr):
    xnumel = 100
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 5)
    x1 = ((xindex // 5) % 5)
    x3 = xindex
    x4 = xindex // 5
    tmp3 = tl.load(in_out_ptr0 + (x3), xmask)
    tmp6 = tl.load(in_ptr0 + (x4), xmask, eviction_policy='evict_last')
    tmp9 = tl.load(in_ptr1 + (x4), xmask, eviction_policy='evict_last')
    tmp0 = x0
    tmp1 = x1
    tmp2 = tmp0 > tmp1
    tmp4 = tl.full([1], -3.4028234663852886e+38, tl.float32)
    tmp5 = tl.where(tmp2, tmp4, tmp3)
    tmp7 = tmp5 - tmp6
    tmp8 = libdevice.exp(tmp7)
    tmp10 = (tmp8 / tmp9)
    tl.store(in_out_ptr0 + (x3), tmp10, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/b7/cb7hu76rl35rcthjomhogo5dcgyrqwk2qjzzdjvb6luxiche3bt6.py
# Topologically Sorted Source Nodes: [view_3, permute_1, ctx_1], Original ATen: [aten.view, aten.permute, aten.clone]
# Source node to ATen node mapping:
#   ctx_1 => clone
#   permute_1 => permute_4
#   view_3 => view_10
# Graph fragment:
#   %bmm : Tensor "f32[4, 5, 16][80, 16, 1]cuda:0" = PlaceHolder[target=bmm]
#   %view_10 : Tensor "f32[1, 4, 5, 16][320, 80, 16, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%bmm, [1, 4, 5, 16]), kwargs = {})
#   %permute_4 : Tensor "f32[1, 5, 4, 16][320, 16, 80, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%view_10, [0, 2, 1, 3]), kwargs = {})
#   %clone : Tensor "f32[1, 5, 4, 16][320, 64, 16, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%permute_4,), kwargs = {memory_format: torch.contiguous_format})
#   return %clone
triton_poi_fused_clone_permute_view_4 = async_compile.triton('triton_poi_fused_clone_permute_view_4', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 512}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_clone_permute_view_4', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 3840}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_clone_permute_view_4(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 320
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 16)
    x1 = ((xindex // 16) % 4)
    x2 = xindex // 64
    x3 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 16*x2 + 80*x1), xmask)
    tl.store(out_ptr0 + (x3), tmp0, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/tj/ctji2cm2podlo7vv66s4yfsqd4gfza5bmulintlosd6yclysjlxj.py
# Topologically Sorted Source Nodes: [linear_1, attn, ln_1], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   attn => add_4
#   linear_1 => add_tensor_5, view_13
#   ln_1 => add_5, add_6, mul_5, mul_6, rsqrt_2, sub_4, var_mean_2
# Graph fragment:
#   %arg10_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg10_1]
#   %mm_default_5 : Tensor "f32[5, 64][64, 1]cuda:0" = PlaceHolder[target=mm_default_5]
#   %add_1 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=add_1]
#   %getitem_5 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_5]
#   %buf18 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf18]
#   %arg11_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg11_1]
#   %arg12_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg12_1]
#   %add_tensor_5 : Tensor "f32[5, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg10_1, %mm_default_5), kwargs = {})
#   %view_13 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_5, [1, 5, 64]), kwargs = {})
#   %add_4 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_13, %add_1), kwargs = {})
#   %var_mean_2 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_4, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_4 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_4, %getitem_5), kwargs = {})
#   %add_5 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_4, 1e-05), kwargs = {})
#   %rsqrt_2 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_5,), kwargs = {})
#   %mul_5 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_4, %rsqrt_2), kwargs = {})
#   %mul_6 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_5, %arg11_1), kwargs = {})
#   %add_6 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_6, %arg12_1), kwargs = {})
#   return %getitem_5,%buf18,%add_6
triton_per_fused_add_addmm_native_layer_norm_view_5 = async_compile.triton('triton_per_fused_add_addmm_native_layer_norm_view_5', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 64},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_native_layer_norm_view_5', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 5, 'num_store': 1, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 5888}}
)
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_5(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 64
    R0_BLOCK: tl.constexpr = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp3 = tl.load(in_ptr2 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp28 = tl.load(in_ptr3 + (r0_1), None, eviction_policy='evict_last')
    tmp30 = tl.load(in_ptr4 + (r0_1), None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp4 = tmp2 + tmp3
    tmp5 = tl.broadcast_to(tmp4, [XBLOCK, R0_BLOCK])
    tmp7 = tl.where(xmask, tmp5, 0)
    tmp8 = tl.broadcast_to(tmp5, [XBLOCK, R0_BLOCK])
    tmp10 = tl.where(xmask, tmp8, 0)
    tmp11 = tl.sum(tmp10, 1)[:, None].to(tl.float32)
    tmp12 = tl.full([1, 1], 64, tl.int32)
    tmp13 = tmp12.to(tl.float32)
    tmp14 = (tmp11 / tmp13)
    tmp15 = tmp5 - tmp14
    tmp16 = tmp15 * tmp15
    tmp17 = tl.broadcast_to(tmp16, [XBLOCK, R0_BLOCK])
    tmp19 = tl.where(xmask, tmp17, 0)
    tmp20 = tl.sum(tmp19, 1)[:, None].to(tl.float32)
    tmp21 = tmp4 - tmp14
    tmp22 = tl.full([1, 1], 64.0, tl.float32)
    tmp23 = (tmp20 / tmp22)
    tmp24 = tl.full([1, 1], 1e-05, tl.float32)
    tmp25 = tmp23 + tmp24
    tmp26 = libdevice.rsqrt(tmp25)
    tmp27 = tmp21 * tmp26
    tmp29 = tmp27 * tmp28
    tmp31 = tmp29 + tmp30
    tl.store(out_ptr2 + (r0_1 + 64*x0), tmp31, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/mu/cmupteq3r3wprsxp7oo23uflwuyyj5subegkfnpsd4rxjkzsc7n6.py
# Topologically Sorted Source Nodes: [linear_2, mul_1, mul_2, mul_3, mul_4, add_1, mul_5, tanh, add_2, mul_6], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh]
# Source node to ATen node mapping:
#   add_1 => add_7
#   add_2 => add_8
#   linear_2 => add_tensor_4, view_15
#   mul_1 => mul_7
#   mul_2 => mul_8
#   mul_3 => mul_9
#   mul_4 => mul_10
#   mul_5 => mul_11
#   mul_6 => mul_12
#   tanh => tanh
# Graph fragment:
#   %arg14_1 : Tensor "f32[256][1]cuda:0" = PlaceHolder[target=arg14_1]
#   %mm_default_4 : Tensor "f32[5, 256][256, 1]cuda:0" = PlaceHolder[target=mm_default_4]
#   %add_tensor_4 : Tensor "f32[5, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg14_1, %mm_default_4), kwargs = {})
#   %view_15 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=4] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_4, [1, 5, 256]), kwargs = {})
#   %mul_7 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.5), kwargs = {})
#   %mul_8 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.79788456), kwargs = {})
#   %mul_9 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.044715), kwargs = {})
#   %mul_10 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_9, %view_15), kwargs = {})
#   %add_7 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_10, 1), kwargs = {})
#   %mul_11 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_8, %add_7), kwargs = {})
#   %tanh : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.tanh.default](args = (%mul_11,), kwargs = {})
#   %add_8 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%tanh, 1.0), kwargs = {})
#   %mul_12 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_7, %add_8), kwargs = {})
#   return %mul_12
triton_poi_fused_add_addmm_mul_tanh_view_6 = async_compile.triton('triton_poi_fused_add_addmm_mul_tanh_view_6', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 2048}, 
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_add_addmm_mul_tanh_view_6', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16384}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_add_addmm_mul_tanh_view_6(in_out_ptr0, in_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 1280
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = (xindex % 256)
    x2 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_out_ptr0 + (x2), xmask)
    tmp2 = tmp0 + tmp1
    tmp3 = tl.full([1], 0.5, tl.float32)
    tmp4 = tmp2 * tmp3
    tmp5 = tl.full([1], 0.79788456, tl.float32)
    tmp6 = tmp2 * tmp5
    tmp7 = tl.full([1], 0.044715, tl.float32)
    tmp8 = tmp2 * tmp7
    tmp9 = tmp8 * tmp2
    tmp10 = tl.full([1], 1.0, tl.float32)
    tmp11 = tmp9 + tmp10
    tmp12 = tmp6 * tmp11
    tmp13 = libdevice.tanh(tmp12)
    tmp14 = tmp13 + tmp10
    tmp15 = tmp4 * tmp14
    tl.store(in_out_ptr0 + (x2), tmp15, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/p5/cp567x3ojcmc65wm2zmrbjrvchc5ljssrlkrwg6ukvzonlcouku3.py
# Topologically Sorted Source Nodes: [linear_2, mul_1, mul_2, mul_3, mul_4, add_1, mul_5, tanh, add_2, mul_6, linear_3], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh]
# Source node to ATen node mapping:
#   add_1 => add_7
#   add_2 => add_8
#   linear_2 => add_tensor_4, view_15
#   linear_3 => constant_pad_nd_default_1, view_16
#   mul_1 => mul_7
#   mul_2 => mul_8
#   mul_3 => mul_9
#   mul_4 => mul_10
#   mul_5 => mul_11
#   mul_6 => mul_12
#   tanh => tanh
# Graph fragment:
#   %mul_12 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0" = PlaceHolder[target=mul_12]
#   %add_tensor_4 : Tensor "f32[5, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg14_1, %mm_default_4), kwargs = {})
#   %view_15 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=4] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_4, [1, 5, 256]), kwargs = {})
#   %mul_7 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.5), kwargs = {})
#   %mul_8 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.79788456), kwargs = {})
#   %mul_9 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%view_15, 0.044715), kwargs = {})
#   %mul_10 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_9, %view_15), kwargs = {})
#   %add_7 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_10, 1), kwargs = {})
#   %mul_11 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_8, %add_7), kwargs = {})
#   %tanh : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.tanh.default](args = (%mul_11,), kwargs = {})
#   %add_8 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%tanh, 1.0), kwargs = {})
#   %mul_12 : Tensor "f32[1, 5, 256][1280, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_7, %add_8), kwargs = {})
#   %view_16 : Tensor "f32[5, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mul_12, [5, 256]), kwargs = {})
#   %constant_pad_nd_default_1 : Tensor "f32[8, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.constant_pad_nd.default](args = (%view_16, [0, 0, 0, 3]), kwargs = {})
#   return %constant_pad_nd_default_1
triton_poi_fused_add_addmm_mul_tanh_view_7 = async_compile.triton('triton_poi_fused_add_addmm_mul_tanh_view_7', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 2048}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_add_addmm_mul_tanh_view_7', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 21504}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_add_addmm_mul_tanh_view_7(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 2048
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x1 = xindex // 256
    x2 = xindex
    tmp0 = x1
    tmp1 = tl.full([1], 5, tl.int64)
    tmp2 = tmp0 < tmp1
    tmp3 = tl.load(in_ptr0 + (x2), tmp2 & xmask, other=0.0)
    tl.store(out_ptr0 + (x2), tmp3, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/iy/ciy6xqhu2fggcsswbjzxqcfwfx4y3jnqyerhqjvn34gsfpdzg2mp.py
# Topologically Sorted Source Nodes: [linear_1, attn, linear_3, hidden_1, ln_2], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   attn => add_4
#   hidden_1 => add_9
#   linear_1 => add_tensor_5, view_13
#   linear_3 => add_tensor_3, slice_tensor_1, view_17
#   ln_2 => add_10, add_11, mul_13, mul_14, rsqrt_3, sub_5, var_mean_3
# Graph fragment:
#   %arg16_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg16_1]
#   %mm_default_3 : Tensor "f32[8, 64][64, 1]cuda:0" = PlaceHolder[target=mm_default_3]
#   %arg10_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg10_1]
#   %mm_default_5 : Tensor "f32[5, 64][64, 1]cuda:0" = PlaceHolder[target=mm_default_5]
#   %add_1 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=add_1]
#   %add_9 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=add_9]
#   %getitem_7 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_7]
#   %buf27 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf27]
#   %arg17_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg17_1]
#   %arg18_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg18_1]
#   %add_tensor_5 : Tensor "f32[5, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg10_1, %mm_default_5), kwargs = {})
#   %view_13 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_5, [1, 5, 64]), kwargs = {})
#   %add_4 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_13, %add_1), kwargs = {})
#   %add_tensor_3 : Tensor "f32[8, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg16_1, %mm_default_3), kwargs = {})
#   %slice_tensor_1 : Tensor "f32[5, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%add_tensor_3, 0, 0, -3), kwargs = {})
#   %view_17 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%slice_tensor_1, [1, 5, 64]), kwargs = {})
#   %add_9 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_17, %add_4), kwargs = {})
#   %var_mean_3 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_9, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_5 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_9, %getitem_7), kwargs = {})
#   %add_10 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_6, 1e-05), kwargs = {})
#   %rsqrt_3 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_10,), kwargs = {})
#   %mul_13 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_5, %rsqrt_3), kwargs = {})
#   %mul_14 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_13, %arg17_1), kwargs = {})
#   %add_11 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_14, %arg18_1), kwargs = {})
#   return %add_9,%getitem_7,%buf27,%add_11
triton_per_fused_add_addmm_native_layer_norm_view_8 = async_compile.triton('triton_per_fused_add_addmm_native_layer_norm_view_8', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 64},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_native_layer_norm_view_8', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 7, 'num_store': 2, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 9984}}
)
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_8(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 64
    R0_BLOCK: tl.constexpr = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp3 = tl.load(in_ptr2 + (r0_1), None, eviction_policy='evict_last')
    tmp4 = tl.load(in_out_ptr0 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp6 = tl.load(in_ptr3 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp32 = tl.load(in_ptr4 + (r0_1), None, eviction_policy='evict_last')
    tmp34 = tl.load(in_ptr5 + (r0_1), None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp5 = tmp3 + tmp4
    tmp7 = tmp5 + tmp6
    tmp8 = tmp2 + tmp7
    tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
    tmp11 = tl.where(xmask, tmp9, 0)
    tmp12 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp14 = tl.where(xmask, tmp12, 0)
    tmp15 = tl.sum(tmp14, 1)[:, None].to(tl.float32)
    tmp16 = tl.full([1, 1], 64, tl.int32)
    tmp17 = tmp16.to(tl.float32)
    tmp18 = (tmp15 / tmp17)
    tmp19 = tmp9 - tmp18
    tmp20 = tmp19 * tmp19
    tmp21 = tl.broadcast_to(tmp20, [XBLOCK, R0_BLOCK])
    tmp23 = tl.where(xmask, tmp21, 0)
    tmp24 = tl.sum(tmp23, 1)[:, None].to(tl.float32)
    tmp25 = tmp8 - tmp18
    tmp26 = tl.full([1, 1], 64.0, tl.float32)
    tmp27 = (tmp24 / tmp26)
    tmp28 = tl.full([1, 1], 1e-05, tl.float32)
    tmp29 = tmp27 + tmp28
    tmp30 = libdevice.rsqrt(tmp29)
    tmp31 = tmp25 * tmp30
    tmp33 = tmp31 * tmp32
    tmp35 = tmp33 + tmp34
    tl.store(in_out_ptr0 + (r0_1 + 64*x0), tmp8, xmask)
    tl.store(out_ptr2 + (r0_1 + 64*x0), tmp35, xmask)
''', device_str='cuda')


# kernel path: /tmp/gpu-check-compiled-x8xlc32k/capture/inductor/cache/a7/ca7hu2ngtskjyttyqh7zmlwxmmsap6qamhg4xchmru3ahevmv7ra.py
# Topologically Sorted Source Nodes: [linear_5, attn_1, linear_7, hidden_2, hidden_3], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
# Source node to ATen node mapping:
#   attn_1 => add_12
#   hidden_2 => add_17
#   hidden_3 => add_18, add_19, mul_23, mul_24, rsqrt_5, sub_8, var_mean_5
#   linear_5 => add_tensor_2, view_29
#   linear_7 => add_tensor, slice_tensor, view_33
# Graph fragment:
#   %arg28_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg28_1]
#   %mm_default : Tensor "f32[8, 64][64, 1]cuda:0" = PlaceHolder[target=mm_default]
#   %arg22_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg22_1]
#   %mm_default_2 : Tensor "f32[5, 64][64, 1]cuda:0" = PlaceHolder[target=mm_default_2]
#   %add_9 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=add_9]
#   %add_17 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0" = PlaceHolder[target=add_17]
#   %getitem_11 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=getitem_11]
#   %buf48 : Tensor "f32[1, 5, 1][5, 1, 5]cuda:0" = PlaceHolder[target=buf48]
#   %arg29_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg29_1]
#   %arg30_1 : Tensor "f32[64][1]cuda:0" = PlaceHolder[target=arg30_1]
#   %add_tensor_2 : Tensor "f32[5, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg22_1, %mm_default_2), kwargs = {})
#   %view_29 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%add_tensor_2, [1, 5, 64]), kwargs = {})
#   %add_12 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_29, %add_9), kwargs = {})
#   %add_tensor : Tensor "f32[8, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%arg28_1, %mm_default), kwargs = {})
#   %slice_tensor : Tensor "f32[5, 64][64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.slice.Tensor](args = (%add_tensor, 0, 0, -3), kwargs = {})
#   %view_33 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%slice_tensor, [1, 5, 64]), kwargs = {})
#   %add_17 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%view_33, %add_12), kwargs = {})
#   %var_mean_5 : [num_users=2] = call_function[target=torch.ops.aten.var_mean.correction](args = (%add_17, [2]), kwargs = {correction: 0, keepdim: True})
#   %sub_8 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add_17, %getitem_11), kwargs = {})
#   %add_18 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%getitem_10, 1e-05), kwargs = {})
#   %rsqrt_5 : Tensor "f32[1, 5, 1][5, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.rsqrt.default](args = (%add_18,), kwargs = {})
#   %mul_23 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub_8, %rsqrt_5), kwargs = {})
#   %mul_24 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_23, %arg29_1), kwargs = {})
#   %add_19 : Tensor "f32[1, 5, 64][320, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_24, %arg30_1), kwargs = {})
#   return %add_17,%getitem_11,%buf48,%add_19
triton_per_fused_add_addmm_native_layer_norm_view_9 = async_compile.triton('triton_per_fused_add_addmm_native_layer_norm_view_9', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 8, 'r0_': 64},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_add_addmm_native_layer_norm_view_9', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 7, 'num_store': 1, 'num_reduction': 4, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': False, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 0, 'r0_': 7424}}
)
@triton.jit
def triton_per_fused_add_addmm_native_layer_norm_view_9(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 5
    r0_numel = 64
    R0_BLOCK: tl.constexpr = 64
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1), None, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr1 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp3 = tl.load(in_ptr2 + (r0_1), None, eviction_policy='evict_last')
    tmp4 = tl.load(in_out_ptr0 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp6 = tl.load(in_ptr3 + (r0_1 + 64*x0), xmask, other=0.0)
    tmp32 = tl.load(in_ptr4 + (r0_1), None, eviction_policy='evict_last')
    tmp34 = tl.load(in_ptr5 + (r0_1), None, eviction_policy='evict_last')
    tmp2 = tmp0 + tmp1
    tmp5 = tmp3 + tmp4
    tmp7 = tmp5 + tmp6
    tmp8 = tmp2 + tmp7
    tmp9 = tl.broadcast_to(tmp8, [XBLOCK, R0_BLOCK])
    tmp11 = tl.where(xmask, tmp9, 0)
    tmp12 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp14 = tl.where(xmask, tmp12, 0)
    tmp15 = tl.sum(tmp14, 1)[:, None].to(tl.float32)
    tmp16 = tl.full([1, 1], 64, tl.int32)
    tmp17 = tmp16.to(tl.float32)
    tmp18 = (tmp15 / tmp17)
    tmp19 = tmp9 - tmp18
    tmp20 = tmp19 * tmp19
    tmp21 = tl.broadcast_to(tmp20, [XBLOCK, R0_BLOCK])
    tmp23 = tl.where(xmask, tmp21, 0)
    tmp24 = tl.sum(tmp23, 1)[:, None].to(tl.float32)
    tmp25 = tmp8 - tmp18
    tmp26 = tl.full([1, 1], 64.0, tl.float32)
    tmp27 = (tmp24 / tmp26)
    tmp28 = tl.full([1, 1], 1e-05, tl.float32)
    tmp29 = tmp27 + tmp28
    tmp30 = libdevice.rsqrt(tmp29)
    tmp31 = tmp25 * tmp30
    tmp33 = tmp31 * tmp32
    tmp35 = tmp33 + tmp34
    tl.store(in_out_ptr0 + (r0_1 + 64*x0), tmp35, xmask)
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
        arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1 = args
        args.clear()
        assert_size_stride(arg0_1, (1000, 64), (64, 1))
        assert_size_stride(arg1_1, (1, 5), (5, 1))
        assert_size_stride(arg2_1, (64, ), (1, ))
        assert_size_stride(arg3_1, (64, ), (1, ))
        assert_size_stride(arg4_1, (4, ), (1, ))
        assert_size_stride(arg5_1, (64, ), (1, ))
        assert_size_stride(arg6_1, (64, ), (1, ))
        assert_size_stride(arg7_1, (192, 64), (64, 1))
        assert_size_stride(arg8_1, (192, ), (1, ))
        assert_size_stride(arg9_1, (64, 64), (64, 1))
        assert_size_stride(arg10_1, (64, ), (1, ))
        assert_size_stride(arg11_1, (64, ), (1, ))
        assert_size_stride(arg12_1, (64, ), (1, ))
        assert_size_stride(arg13_1, (256, 64), (64, 1))
        assert_size_stride(arg14_1, (256, ), (1, ))
        assert_size_stride(arg15_1, (64, 256), (256, 1))
        assert_size_stride(arg16_1, (64, ), (1, ))
        assert_size_stride(arg17_1, (64, ), (1, ))
        assert_size_stride(arg18_1, (64, ), (1, ))
        assert_size_stride(arg19_1, (192, 64), (64, 1))
        assert_size_stride(arg20_1, (192, ), (1, ))
        assert_size_stride(arg21_1, (64, 64), (64, 1))
        assert_size_stride(arg22_1, (64, ), (1, ))
        assert_size_stride(arg23_1, (64, ), (1, ))
        assert_size_stride(arg24_1, (64, ), (1, ))
        assert_size_stride(arg25_1, (256, 64), (64, 1))
        assert_size_stride(arg26_1, (256, ), (1, ))
        assert_size_stride(arg27_1, (64, 256), (256, 1))
        assert_size_stride(arg28_1, (64, ), (1, ))
        assert_size_stride(arg29_1, (64, ), (1, ))
        assert_size_stride(arg30_1, (64, ), (1, ))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf3 = empty_strided_cuda((1, 5, 64), (320, 64, 1), torch.float32)
            buf7 = empty_strided_cuda((1, 5, 64), (320, 64, 1), torch.float32)
            # Topologically Sorted Source Nodes: [embedding, hidden, ln], Original ATen: [aten.embedding, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_embedding_native_layer_norm_0.run(arg1_1, arg0_1, arg2_1, arg3_1, arg5_1, arg6_1, buf3, buf7, 5, 64, stream=stream0)
            del arg1_1
            del arg2_1
            del arg3_1
            del arg5_1
            del arg6_1
            buf8 = empty_strided_cuda((5, 192), (192, 1), torch.float32)
            # Topologically Sorted Source Nodes: [ln, linear], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.addmm(arg8_1, reinterpret_tensor(buf7, (5, 64), (64, 1), 0), reinterpret_tensor(arg7_1, (64, 192), (1, 64), 0), alpha=1, beta=1, out=buf8)
            del arg7_1
            del arg8_1
            buf9 = empty_strided_cuda((1, 4, 5), (20, 5, 1), torch.float32)
            # Topologically Sorted Source Nodes: [cumsum, pos, view, unsqueeze, alibi], Original ATen: [aten.cumsum, aten.sub, aten.view, aten.unsqueeze, aten.mul]
            stream0 = get_raw_stream(0)
            triton_poi_fused_cumsum_mul_sub_unsqueeze_view_1.run(arg4_1, buf9, 20, stream=stream0)
            del arg4_1
            buf10 = empty_strided_cuda((4, 5, 5), (25, 5, 1), torch.float32)
            # Topologically Sorted Source Nodes: [cumsum, pos, view, unsqueeze, alibi, flatten, unsqueeze_1, linear, fused, getitem, transpose, q, getitem_1, permute, k, scores], Original ATen: [aten.cumsum, aten.sub, aten.view, aten.unsqueeze, aten.mul, aten.select, aten.transpose, aten.permute, aten.baddbmm]
            extern_kernels.baddbmm(reinterpret_tensor(buf9, (4, 5, 5), (5, 0, 1), 0), reinterpret_tensor(buf8, (4, 5, 16), (48, 192, 1), 0), reinterpret_tensor(buf8, (4, 16, 5), (48, 1, 192), 16), alpha=0.25, beta=1.0, out=buf10)
            buf11 = empty_strided_cuda((1, 4, 5, 1), (20, 5, 1, 20), torch.float32)
            buf12 = empty_strided_cuda((1, 4, 5, 1), (20, 5, 1, 20), torch.float32)
            # Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_2, scores_1], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_cumsum_gt_masked_fill_prepare_softmax_online_sub_unsqueeze_view_2.run(buf10, buf11, buf12, 20, stream=stream0)
            buf13 = reinterpret_tensor(buf10, (1, 4, 5, 5), (100, 25, 5, 1), 0); del buf10  # reuse
            # Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_2, scores_1, softmax], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_cumsum_exp_gt_masked_fill_sub_unsqueeze_view_3.run(buf13, buf11, buf12, 100, stream=stream0)
            del buf11
            buf14 = reinterpret_tensor(buf7, (4, 5, 16), (80, 16, 1), 0); del buf7  # reuse
            # Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_2, linear, fused, scores_1, softmax, flatten_1, getitem_2, transpose_1, v, ctx], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, aten.exp, aten._softmax, aten.select, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf13, (4, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf8, (4, 5, 16), (48, 192, 1), 32), out=buf14)
            del buf8
            buf15 = empty_strided_cuda((1, 5, 4, 16), (320, 64, 16, 1), torch.float32)
            # Topologically Sorted Source Nodes: [view_3, permute_1, ctx_1], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_4.run(buf14, buf15, 320, stream=stream0)
            buf16 = reinterpret_tensor(buf14, (5, 64), (64, 1), 0); del buf14  # reuse
            # Topologically Sorted Source Nodes: [view_3, permute_1, ctx_1, linear_1], Original ATen: [aten.view, aten.permute, aten.clone, aten._unsafe_view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf15, (5, 64), (64, 1), 0), reinterpret_tensor(arg9_1, (64, 64), (1, 64), 0), out=buf16)
            del arg9_1
            buf20 = reinterpret_tensor(buf15, (1, 5, 64), (320, 64, 1), 0); del buf15  # reuse
            # Topologically Sorted Source Nodes: [linear_1, attn, ln_1], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_5.run(arg10_1, buf16, buf3, arg11_1, arg12_1, buf20, 5, 64, stream=stream0)
            del arg11_1
            del arg12_1
            buf21 = empty_strided_cuda((5, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_1, attn, ln_1, linear_2], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf20, (5, 64), (64, 1), 0), reinterpret_tensor(arg13_1, (64, 256), (1, 64), 0), out=buf21)
            del arg13_1
            buf22 = reinterpret_tensor(buf21, (1, 5, 256), (1280, 256, 1), 0); del buf21  # reuse
            # Topologically Sorted Source Nodes: [linear_2, mul_1, mul_2, mul_3, mul_4, add_1, mul_5, tanh, add_2, mul_6], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_tanh_view_6.run(buf22, arg14_1, 1280, stream=stream0)
            del arg14_1
            buf23 = empty_strided_cuda((8, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_2, mul_1, mul_2, mul_3, mul_4, add_1, mul_5, tanh, add_2, mul_6, linear_3], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_tanh_view_7.run(buf22, buf23, 2048, stream=stream0)
            del buf22
            buf24 = empty_strided_cuda((8, 64), (64, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_2, mul_1, mul_2, mul_3, mul_4, add_1, mul_5, tanh, add_2, mul_6, linear_3], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(buf23, reinterpret_tensor(arg15_1, (256, 64), (1, 256), 0), out=buf24)
            del arg15_1
            del buf23
            buf25 = reinterpret_tensor(buf16, (1, 5, 64), (320, 64, 1), 0); del buf16  # reuse
            buf29 = buf20; del buf20  # reuse
            # Topologically Sorted Source Nodes: [linear_1, attn, linear_3, hidden_1, ln_2], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_8.run(buf25, arg16_1, buf24, arg10_1, buf3, arg17_1, arg18_1, buf29, 5, 64, stream=stream0)
            del arg10_1
            del arg16_1
            del arg17_1
            del arg18_1
            del buf24
            buf30 = empty_strided_cuda((5, 192), (192, 1), torch.float32)
            # Topologically Sorted Source Nodes: [ln_2, linear_4], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.addmm]
            extern_kernels.addmm(arg20_1, reinterpret_tensor(buf29, (5, 64), (64, 1), 0), reinterpret_tensor(arg19_1, (64, 192), (1, 64), 0), alpha=1, beta=1, out=buf30)
            del arg19_1
            del arg20_1
            buf31 = reinterpret_tensor(buf13, (4, 5, 5), (25, 5, 1), 0); del buf13  # reuse
            # Topologically Sorted Source Nodes: [cumsum, pos, view, unsqueeze, alibi, flatten, unsqueeze_1, linear_4, fused_1, getitem_3, transpose_2, q_1, getitem_4, permute_2, k_1, scores_3], Original ATen: [aten.cumsum, aten.sub, aten.view, aten.unsqueeze, aten.mul, aten.select, aten.transpose, aten.permute, aten.baddbmm]
            extern_kernels.baddbmm(reinterpret_tensor(buf9, (4, 5, 5), (5, 0, 1), 0), reinterpret_tensor(buf30, (4, 5, 16), (48, 192, 1), 0), reinterpret_tensor(buf30, (4, 16, 5), (48, 1, 192), 16), alpha=0.25, beta=1.0, out=buf31)
            buf32 = reinterpret_tensor(buf9, (1, 4, 5, 1), (20, 5, 1, 20), 0); del buf9  # reuse
            buf33 = buf12; del buf12  # reuse
            # Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_5, scores_4], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, prims.prepare_softmax_online]
            stream0 = get_raw_stream(0)
            triton_poi_fused_cumsum_gt_masked_fill_prepare_softmax_online_sub_unsqueeze_view_2.run(buf31, buf32, buf33, 20, stream=stream0)
            buf34 = reinterpret_tensor(buf31, (1, 4, 5, 5), (100, 25, 5, 1), 0); del buf31  # reuse
            # Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_5, scores_4, softmax_1], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, aten.exp, aten._softmax]
            stream0 = get_raw_stream(0)
            triton_poi_fused__softmax_cumsum_exp_gt_masked_fill_sub_unsqueeze_view_3.run(buf34, buf32, buf33, 100, stream=stream0)
            del buf32
            del buf33
            buf35 = reinterpret_tensor(buf29, (4, 5, 16), (80, 16, 1), 0); del buf29  # reuse
            # Topologically Sorted Source Nodes: [cumsum, pos, unsqueeze_2, unsqueeze_3, gt, causal_mask, scores_5, linear_4, fused_1, scores_4, softmax_1, flatten_2, getitem_5, transpose_3, v_1, ctx_2], Original ATen: [aten.cumsum, aten.sub, aten.unsqueeze, aten.gt, aten.masked_fill, aten.view, aten.exp, aten._softmax, aten.select, aten.transpose, aten.bmm]
            extern_kernels.bmm(reinterpret_tensor(buf34, (4, 5, 5), (25, 5, 1), 0), reinterpret_tensor(buf30, (4, 5, 16), (48, 192, 1), 32), out=buf35)
            del buf30
            del buf34
            buf36 = reinterpret_tensor(buf3, (1, 5, 4, 16), (320, 64, 16, 1), 0); del buf3  # reuse
            # Topologically Sorted Source Nodes: [view_6, permute_3, ctx_3], Original ATen: [aten.view, aten.permute, aten.clone]
            stream0 = get_raw_stream(0)
            triton_poi_fused_clone_permute_view_4.run(buf35, buf36, 320, stream=stream0)
            buf37 = reinterpret_tensor(buf35, (5, 64), (64, 1), 0); del buf35  # reuse
            # Topologically Sorted Source Nodes: [view_6, permute_3, ctx_3, linear_5], Original ATen: [aten.view, aten.permute, aten.clone, aten._unsafe_view, aten.t, aten.addmm]
            extern_kernels.mm(reinterpret_tensor(buf36, (5, 64), (64, 1), 0), reinterpret_tensor(arg21_1, (64, 64), (1, 64), 0), out=buf37)
            del arg21_1
            buf41 = reinterpret_tensor(buf36, (1, 5, 64), (320, 64, 1), 0); del buf36  # reuse
            # Topologically Sorted Source Nodes: [linear_5, attn_1, ln_3], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_5.run(arg22_1, buf37, buf25, arg23_1, arg24_1, buf41, 5, 64, stream=stream0)
            del arg23_1
            del arg24_1
            buf42 = empty_strided_cuda((5, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_5, attn_1, ln_3, linear_6], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm, aten.t]
            extern_kernels.mm(reinterpret_tensor(buf41, (5, 64), (64, 1), 0), reinterpret_tensor(arg25_1, (64, 256), (1, 64), 0), out=buf42)
            del arg25_1
            del buf41
            buf43 = reinterpret_tensor(buf42, (1, 5, 256), (1280, 256, 1), 0); del buf42  # reuse
            # Topologically Sorted Source Nodes: [linear_6, mul_7, mul_8, mul_9, mul_10, add_5, mul_11, tanh_1, add_6, mul_12], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_tanh_view_6.run(buf43, arg26_1, 1280, stream=stream0)
            del arg26_1
            buf44 = empty_strided_cuda((8, 256), (256, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_6, mul_7, mul_8, mul_9, mul_10, add_5, mul_11, tanh_1, add_6, mul_12, linear_7], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_addmm_mul_tanh_view_7.run(buf43, buf44, 2048, stream=stream0)
            del buf43
            buf45 = empty_strided_cuda((8, 64), (64, 1), torch.float32)
            # Topologically Sorted Source Nodes: [linear_6, mul_7, mul_8, mul_9, mul_10, add_5, mul_11, tanh_1, add_6, mul_12, linear_7], Original ATen: [aten.addmm, aten.view, aten.mul, aten.add, aten.tanh, aten.t]
            extern_kernels.mm(buf44, reinterpret_tensor(arg27_1, (256, 64), (1, 256), 0), out=buf45)
            del arg27_1
            del buf44
            buf46 = reinterpret_tensor(buf37, (1, 5, 64), (320, 64, 1), 0); del buf37  # reuse
            buf50 = buf46; del buf46  # reuse
            # Topologically Sorted Source Nodes: [linear_5, attn_1, linear_7, hidden_2, hidden_3], Original ATen: [aten.addmm, aten.view, aten.add, aten.native_layer_norm]
            stream0 = get_raw_stream(0)
            triton_per_fused_add_addmm_native_layer_norm_view_9.run(buf50, arg28_1, buf45, arg22_1, buf25, arg29_1, arg30_1, 5, 64, stream=stream0)
            del arg22_1
            del arg28_1
            del arg29_1
            del arg30_1
            del buf25
            del buf45
            buf51 = empty_strided_cuda((5, 1000), (1000, 1), torch.float32)
            # Topologically Sorted Source Nodes: [hidden_3, linear_8], Original ATen: [aten.native_layer_norm, aten.view, aten.t, aten.mm]
            extern_kernels.mm(reinterpret_tensor(buf50, (5, 64), (64, 1), 0), reinterpret_tensor(arg0_1, (64, 1000), (1, 64), 0), out=buf51)
            del arg0_1
            del buf50
        return (reinterpret_tensor(buf51, (1, 5, 1000), (5000, 1000, 1), 0), )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    arg0_1 = rand_strided((1000, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg1_1 = rand_strided((1, 5), (5, 1), device='cuda:0', dtype=torch.int64)
    arg2_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg3_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg4_1 = rand_strided((4, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg5_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg6_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg7_1 = rand_strided((192, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg8_1 = rand_strided((192, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg9_1 = rand_strided((64, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg10_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg11_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg12_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg13_1 = rand_strided((256, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg14_1 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg15_1 = rand_strided((64, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    arg16_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg17_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg18_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg19_1 = rand_strided((192, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg20_1 = rand_strided((192, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg21_1 = rand_strided((64, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg22_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg23_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg24_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg25_1 = rand_strided((256, 64), (64, 1), device='cuda:0', dtype=torch.float32)
    arg26_1 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg27_1 = rand_strided((64, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    arg28_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg29_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg30_1 = rand_strided((64, ), (1, ), device='cuda:0', dtype=torch.float32)
    return [arg0_1, arg1_1, arg2_1, arg3_1, arg4_1, arg5_1, arg6_1, arg7_1, arg8_1, arg9_1, arg10_1, arg11_1, arg12_1, arg13_1, arg14_1, arg15_1, arg16_1, arg17_1, arg18_1, arg19_1, arg20_1, arg21_1, arg22_1, arg23_1, arg24_1, arg25_1, arg26_1, arg27_1, arg28_1, arg29_1, arg30_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
